// The open session's context use, shown unobtrusively in the header (a
// small meter: how much of the model's window the conversation fills), the
// Compact button, and the transcript line of a compaction. The service
// compacts on its own before the window is full; the button does it now.
import { api, errText } from "./bridge";
import { h } from "./view";

/** A chat session's context use (GET /v1/sessions/{id} → context). */
export interface ContextInfo {
  tokens: number;
  window: number;
  limit: number;
  source: string;
  compactions: number;
}

const fmt = (n: number) => n.toLocaleString("en-US");

/** The meter's text and tooltip. */
export function meterText(c: ContextInfo): { text: string; title: string; level: string } {
  const pct = c.window > 0 ? Math.min(100, Math.round((c.tokens / c.window) * 100)) : 0;
  const level = c.tokens > c.limit ? "full" : pct >= 60 ? "high" : "ok";
  let title = `Context: about ${fmt(c.tokens)} of ${fmt(c.window)} tokens (window from ${c.source}). Older messages are summarized automatically before ${fmt(c.limit)}.`;
  if (c.compactions > 0) title += ` Compacted ${c.compactions} time${c.compactions === 1 ? "" : "s"}.`;
  return { text: `${pct}% context`, title, level };
}

/** The transcript line of a session.compacted event. */
export function compactedLine(d: { messages?: number; tokens_before?: number; tokens_after?: number; reason?: string }): string {
  const why = d.reason === "manual" ? "on request" : d.reason === "overflow" ? "the model's window was full" : "to stay within the model's window";
  return `Conversation compacted (${why}): ${d.messages ?? 0} earlier messages summarized, about ${fmt(d.tokens_before ?? 0)} → ${fmt(d.tokens_after ?? 0)} tokens. The full transcript is kept.`;
}

interface ContextAPI {
  SessionContext(sessionId: string): Promise<ContextInfo | null>;
  CompactSession(sessionId: string, instructions: string): Promise<unknown>;
}

const ctxApi = () => api() as unknown as ContextAPI;

/**
 * Puts the meter and the Compact button before anchor and returns the
 * function that refreshes them for a session ("" hides them).
 */
export function mountContext(anchor: HTMLElement, onError: (msg: string) => void): (sessionId: string) => void {
  const meter = h("span", { id: "ctx-meter", class: "ctx-meter", hidden: "" });
  const button = h("button", { id: "compact", class: "small", type: "button", hidden: "", title: "Summarize older messages now (the transcript keeps them)" }, "Compact") as HTMLButtonElement;
  anchor.before(meter, button);
  let current = "";
  let seq = 0;
  const refresh = (sessionId: string) => {
    current = sessionId;
    const mine = ++seq;
    if (!sessionId) {
      meter.hidden = button.hidden = true;
      return;
    }
    // Through a promise: a window whose bindings lack the method (an older
    // app) hides the meter instead of failing the caller.
    Promise.resolve()
      .then(() => ctxApi().SessionContext(sessionId))
      .then((c) => {
        if (mine !== seq) return;
        meter.hidden = button.hidden = !c;
        if (!c) return;
        const m = meterText(c);
        meter.textContent = m.text;
        meter.title = m.title;
        meter.dataset.level = m.level;
      })
      .catch(() => {
        if (mine === seq) meter.hidden = button.hidden = true;
      });
  };
  button.addEventListener("click", () => {
    const id = current;
    if (!id) return;
    button.disabled = true;
    button.textContent = "Compacting…";
    Promise.resolve()
      .then(() => ctxApi().CompactSession(id, ""))
      .catch((e) => onError(errText(e)))
      .finally(() => {
        button.disabled = false;
        button.textContent = "Compact";
        refresh(id);
      });
  });
  return refresh;
}
