// A conversation as Markdown or JSON, from its transcript as the window
// shows it (pure: app.ExportConversation writes the file).
import type { Session } from "./bridge";
import type { Item } from "./transcript";

const who: Partial<Record<Item["kind"], string>> = { user: "You", assistant: "Assistant", error: "Error", stopped: "Stopped", status: "Note", thought: "Thoughts" };

/** The conversation as Markdown: a heading, then each message under its speaker, tool calls as code. */
export function conversationMarkdown(title: string, items: Item[], agent: string): string {
  const out = [`# ${title}`, "", `Agent: ${agent} · exported ${new Date().toISOString()}`, ""];
  for (const it of items) {
    if (it.kind === "tool" && it.tool) {
      const t = it.tool;
      // The decision as the card shows it: the gate's (from the audit log
      // after a reload), the service's own run, or none known (no "()").
      const decision = t.pending ? "waiting" : t.source === "service" ? "ran in the service" : t.source === "agent" ? "ran inside the agent" : t.decision ?? "";
      const by = decision && t.decidedBy ? ` by ${t.decidedBy}` : "";
      const risk = t.class ?? t.risk;
      const note = [decision + by, risk ? `risk: ${risk}` : ""].filter(Boolean).join(", ");
      out.push(`**Tool \`${t.name}\`**${note ? ` (${note})` : ""}`, "", "```json", JSON.stringify(t.arguments ?? {}, null, 2), "```", "");
      const res = t.ok ? t.result : t.error ?? t.result;
      if (res) out.push("```", res, "```", "");
    } else if (it.kind === "roundtable" && it.rt) {
      out.push(`**Round table** ${it.rt.status ?? ""}`, "", it.rt.markdown ?? it.rt.summary ?? "", "");
    } else if (who[it.kind]) {
      out.push(`**${who[it.kind]}:**`, "", it.text, "");
    }
  }
  return out.join("\n");
}

/** The conversation as JSON: the session and its items in order. */
export function conversationJSON(s: Session | undefined, items: Item[]): string {
  return JSON.stringify(
    {
      session: s ?? null,
      exportedAt: new Date().toISOString(),
      items: items.map((it) => ({ kind: it.kind, text: it.text || undefined, turnId: it.turnId, tool: it.tool, roundTable: it.rt })),
    },
    null,
    2,
  );
}
