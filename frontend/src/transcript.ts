// The transcript model of one session: a list of items built from the
// loaded history and then from stream events, applied once each, in order.
// Pure logic (no DOM) so it is unit-tested; the view renders items by id.

export type ItemKind = "user" | "assistant" | "status" | "error" | "tool" | "thought";

export interface Item {
  key: string; // stable id for the view
  kind: ItemKind;
  text: string;
  turnId?: string;
  final?: boolean;
  transient?: boolean; // a status line the next reply or error replaces
  tool?: ToolCard;
}

export interface ToolCard {
  id: string;
  name: string;
  arguments: unknown;
  risk?: string;
  reason?: string;
  class?: string;
  decision?: string; // allowed | denied
  decidedBy?: string;
  edited?: boolean;
  ok?: boolean;
  result?: string;
  error?: string;
  pending: boolean;
}

export interface StreamEvent {
  id: string;
  type: string;
  data: any;
}

/** What applying an event means for the caller beyond the items. */
export interface Effect {
  changed: string[]; // keys of items added or changed
  removed: string[]; // keys of items removed
  reload?: boolean; // stream.reset: reload the transcript
  finished?: { text: string }; // an assistant reply completed (for speech)
  notConfigured?: string; // the service says no provider is configured
}

export class Transcript {
  items: Item[] = [];
  running = false;
  private n = 0;
  private byKey = new Map<string, Item>();

  private add(it: Item, eff: Effect): Item {
    this.items.push(it);
    this.byKey.set(it.key, it);
    eff.changed.push(it.key);
    return it;
  }

  get(key: string): Item | undefined {
    return this.byKey.get(key);
  }

  private newKey(prefix: string): string {
    this.n++;
    return `${prefix}-${this.n}`;
  }

  private removeTransient(eff: Effect): void {
    const keep: Item[] = [];
    for (const it of this.items) {
      if (it.transient) {
        this.byKey.delete(it.key);
        eff.removed.push(it.key);
      } else keep.push(it);
    }
    this.items = keep;
  }

  private lastAssistant(turnId: string | undefined): Item | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const it = this.items[i];
      if (it.kind === "user") return undefined;
      if (it.kind === "assistant" && !it.final && (turnId === undefined || it.turnId === turnId || !it.turnId)) return it;
    }
    return undefined;
  }

  /** The user's own message, shown before the service echoes it. */
  localUser(text: string): Effect {
    const eff: Effect = { changed: [], removed: [] };
    this.add({ key: this.newKey("local"), kind: "user", text, transient: false }, eff).final = false;
    this.running = true;
    return eff;
  }

  /** Loads history (GET /v1/sessions/{id}/messages). */
  load(messages: any[]): void {
    this.items = [];
    this.byKey.clear();
    this.running = false;
    const eff: Effect = { changed: [], removed: [] };
    const cards = new Map<string, Item>();
    for (const m of messages) {
      const key = `m-${m.id ?? this.newKey("h")}`;
      switch (m.role) {
        case "user":
          this.add({ key, kind: "user", text: m.text ?? "" }, eff);
          break;
        case "assistant": {
          if (m.text) this.add({ key, kind: "assistant", text: m.text, final: true }, eff);
          const calls = Array.isArray(m.toolCalls) ? m.toolCalls : [];
          for (const c of calls) {
            const id = c.id ?? c.toolCallId ?? "";
            const fn = c.function ?? c;
            const card: ToolCard = { id, name: fn.name ?? "tool", arguments: parseArgs(fn.arguments), risk: c.risk, pending: false };
            cards.set(id, this.add({ key: `tool-${id}`, kind: "tool", text: "", tool: card }, eff));
          }
          break;
        }
        case "tool": {
          const it = cards.get(m.toolCallId ?? "");
          const meta = m.meta ?? {};
          if (it?.tool) {
            it.tool.result = m.text;
            it.tool.ok = meta.ok ?? !/^denied|^error/i.test(m.text ?? "");
            if (meta.decision) it.tool.decision = meta.decision;
          }
          break;
        }
        case "status": {
          const kind = m.meta?.kind ?? "";
          const isErr = /fail|error/i.test(kind) || m.meta?.error;
          this.add({ key, kind: kind === "thought" ? "thought" : isErr ? "error" : "status", text: m.text ?? "" }, eff);
          break;
        }
      }
    }
  }

  /** Applies one stream event. */
  apply(ev: StreamEvent): Effect {
    const eff: Effect = { changed: [], removed: [] };
    const d = ev.data ?? {};
    switch (ev.type) {
      case "user.message": {
        // The echo of a message sent from this window replaces its local copy.
        const local = this.items.find((it) => it.kind === "user" && it.key.startsWith("local-") && it.final === false && it.text === d.text);
        if (local) {
          local.final = true;
          local.turnId = d.turn_id;
        } else {
          this.add({ key: `e-${ev.id || this.newKey("u")}`, kind: "user", text: d.text ?? "", turnId: d.turn_id, final: true }, eff);
        }
        this.running = true;
        break;
      }
      case "assistant.delta": {
        this.removeTransient(eff);
        let it = this.lastAssistant(d.turn_id);
        if (!it) it = this.add({ key: `a-${ev.id || this.newKey("a")}`, kind: "assistant", text: "", turnId: d.turn_id }, eff);
        else eff.changed.push(it.key);
        it.text += d.text ?? "";
        break;
      }
      case "assistant.final": {
        // An external agent's turn ends with a final that repeats its status
        // line ("Sent to external agent"): the line stays until the reply.
        const echo = this.items.find((it) => it.transient && it.text === d.text && (!d.turn_id || it.turnId === d.turn_id));
        if (echo && d.origin !== "external") {
          const open = this.lastAssistant(d.turn_id);
          if (open) {
            open.final = true;
            eff.changed.push(open.key);
          }
          this.running = false;
          break;
        }
        this.removeTransient(eff);
        let it = this.lastAssistant(d.turn_id);
        if (!it) it = this.add({ key: `a-${ev.id || this.newKey("a")}`, kind: "assistant", text: "", turnId: d.turn_id }, eff);
        else eff.changed.push(it.key);
        it.text = d.text ?? it.text;
        it.final = true;
        this.running = false;
        if (it.text) eff.finished = { text: it.text };
        break;
      }
      case "tool.request": {
        // Text streamed before a tool call is a finished part of the reply.
        const prev = this.lastAssistant(d.turn_id);
        if (prev) {
          prev.final = true;
          eff.changed.push(prev.key);
        }
        const key = `tool-${d.id}`;
        const existing = this.byKey.get(key);
        const card: ToolCard = { id: d.id, name: d.name, arguments: d.arguments, risk: d.risk, reason: d.reason, pending: true };
        if (existing) {
          existing.tool = { ...card, ...existing.tool, pending: existing.tool?.pending ?? true };
          eff.changed.push(key);
        } else this.add({ key, kind: "tool", text: "", turnId: d.turn_id, tool: card }, eff);
        break;
      }
      case "tool.result": {
        const it = this.toolItem(d.id, eff);
        const t = it.tool!;
        t.ok = !!d.ok;
        t.result = d.result ?? "";
        t.error = d.error ?? undefined;
        t.pending = false;
        if (!t.decision) t.decision = d.ok ? "allowed" : "denied";
        eff.changed.push(it.key);
        break;
      }
      case "error": {
        const msg = d.message || d.code || "error";
        this.removeTransient(eff);
        const last = this.lastAssistant(d.turn_id);
        if (last) {
          last.final = true;
          eff.changed.push(last.key);
        }
        this.add({ key: `err-${ev.id || this.newKey("e")}`, kind: "error", text: d.code === "cancelled" ? "Stopped." : msg, turnId: d.turn_id }, eff);
        if (d.code === "not_configured") eff.notConfigured = msg;
        this.running = false;
        break;
      }
      case "status": {
        const kind = String(d.kind ?? "");
        if (kind === "thought") {
          // An agent's reasoning: kept, shown folded.
          this.add({ key: `th-${ev.id || this.newKey("t")}`, kind: "thought", text: d.text ?? "", turnId: d.turn_id }, eff);
        } else if (/fail|error/i.test(kind)) {
          this.removeTransient(eff);
          this.add({ key: `st-${ev.id || this.newKey("s")}`, kind: "error", text: d.text ?? "", turnId: d.turn_id }, eff);
          this.running = false;
        } else {
          this.add({ key: `st-${ev.id || this.newKey("s")}`, kind: "status", text: d.text ?? "", turnId: d.turn_id, transient: true }, eff);
        }
        break;
      }
      case "stream.reset":
        eff.reload = true;
        break;
    }
    return eff;
  }

  /** Records the desktop gate's decision on a call (tool:decision). */
  decide(d: { callId: string; tool: string; arguments: unknown; edited?: boolean; class: string; decision: string; decidedBy: string; reason?: string; ok: boolean; result?: string; error?: string }): Effect {
    const eff: Effect = { changed: [], removed: [] };
    const it = this.toolItem(d.callId, eff, d.tool);
    const t = it.tool!;
    Object.assign(t, { class: d.class, decision: d.decision, decidedBy: d.decidedBy, edited: d.edited, ok: d.ok, pending: false });
    if (d.edited) t.arguments = d.arguments;
    if (d.result !== undefined) t.result = d.result;
    if (d.error) t.error = d.error;
    if (d.reason && !t.reason) t.reason = d.reason;
    eff.changed.push(it.key);
    return eff;
  }

  private toolItem(id: string, eff: Effect, name = "tool"): Item {
    const key = `tool-${id}`;
    let it = this.byKey.get(key);
    if (!it) it = this.add({ key, kind: "tool", text: "", tool: { id, name, arguments: {}, pending: true } }, eff);
    return it;
  }

  /** Synthetic history for the benchmark. */
  synthetic(n: number): void {
    const msgs = [];
    for (let i = 0; i < n; i++) {
      msgs.push({ id: i, role: i % 2 ? "assistant" : "user", text: i % 2 ? `Reply **${i}** with \`code\` and a [link](https://example.com/${i}).` : `Question ${i}?` });
    }
    this.load(msgs);
  }
}

function parseArgs(a: unknown): unknown {
  if (typeof a !== "string") return a ?? {};
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}
