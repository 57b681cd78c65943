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
  /** Sent before the conversation in every request: the assistant's instructions, its tools' descriptions (estimates). */
  system?: number;
  tools?: number;
  tool_count?: number;
  /** Whether Compact would summarize anything now. */
  compactable?: boolean;
}

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * The meter's text, tooltip and explanation (shown on a click): the share of
 * the window in use, and in words what it is made of, so that an empty
 * conversation's few percent are not a mystery.
 */
export function meterText(c: ContextInfo): { text: string; title: string; level: string; detail: string[] } {
  const pct = c.window > 0 ? Math.min(100, Math.round((c.tokens / c.window) * 100)) : 0;
  const level = c.tokens > c.limit ? "full" : pct >= 60 ? "high" : "ok";
  let title = `Context: about ${fmt(c.tokens)} of ${fmt(c.window)} tokens (window from ${c.source}). Older messages are summarized automatically before ${fmt(c.limit)}.`;
  if (c.compactions > 0) title += ` Compacted ${c.compactions} time${c.compactions === 1 ? "" : "s"}.`;
  const detail = [`This conversation uses about ${fmt(c.tokens)} of the model's ${fmt(c.window)} tokens (${pct}%).`];
  if (c.system !== undefined && c.tools !== undefined) {
    const n = c.tool_count ?? 0;
    const base = c.system + c.tools;
    const tools = n > 0 ? `the descriptions of its ${n} tool${n === 1 ? "" : "s"} (about ${fmt(c.tools)})` : "no tools";
    detail.push(`Every request starts with the assistant's instructions (about ${fmt(c.system)} tokens) and ${tools}: about ${fmt(base)} before the first message.`);
    detail.push(`The messages take about ${fmt(Math.max(0, c.tokens - base))}.`);
  }
  detail.push(`Older messages are summarized automatically before ${fmt(c.limit)} tokens; the full transcript is kept.`);
  if (c.compactions > 0) detail.push(`Summarized ${c.compactions} time${c.compactions === 1 ? "" : "s"} so far.`);
  return { text: `${pct}% context`, title, level, detail };
}

/** Compact's state: disabled with the reason when there is nothing to summarize. */
export function compactState(c: ContextInfo): { disabled: boolean; title: string } {
  if (c.compactable === false) return { disabled: true, title: "Nothing to compact yet: the conversation is short, and its newest messages are always kept as they are" };
  return { disabled: false, title: "Summarize older messages now (the transcript keeps them)" };
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
  const meter = h("button", { id: "ctx-meter", class: "ctx-meter", type: "button", "aria-expanded": "false", "aria-controls": "ctx-detail" }) as HTMLButtonElement;
  const detail = h("div", { id: "ctx-detail", class: "ctx-detail", role: "note", hidden: "" });
  const wrap = h("span", { class: "ctx", hidden: "" }, meter, detail);
  const button = h("button", { id: "compact", class: "small", type: "button", hidden: "", title: "Summarize older messages now (the transcript keeps them)" }, "Compact") as HTMLButtonElement;
  anchor.before(wrap, button);
  const showDetail = (on: boolean) => {
    detail.hidden = !on;
    meter.setAttribute("aria-expanded", String(on));
  };
  meter.addEventListener("click", () => showDetail(detail.hidden));
  document.addEventListener("click", (e) => {
    if (!detail.hidden && !wrap.contains(e.target as Node)) showDetail(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !detail.hidden) showDetail(false);
  });
  let current = "";
  let seq = 0;
  let busy = false;
  let state = { disabled: false, title: button.title };
  const hide = () => {
    wrap.hidden = button.hidden = true;
    showDetail(false);
  };
  const refresh = (sessionId: string) => {
    current = sessionId;
    const mine = ++seq;
    if (!sessionId) {
      hide();
      return;
    }
    // Through a promise: a window whose bindings lack the method (an older
    // app) hides the meter instead of failing the caller.
    Promise.resolve()
      .then(() => ctxApi().SessionContext(sessionId))
      .then((c) => {
        if (mine !== seq) return;
        if (!c) return hide();
        wrap.hidden = button.hidden = false;
        const m = meterText(c);
        meter.textContent = m.text;
        meter.title = `${m.title} Click for details.`;
        meter.dataset.level = m.level;
        detail.replaceChildren(...m.detail.map((line) => h("p", {}, line)));
        state = compactState(c);
        button.title = state.title;
        if (!busy) button.disabled = state.disabled;
      })
      .catch(() => {
        if (mine === seq) hide();
      });
  };
  button.addEventListener("click", () => {
    const id = current;
    if (!id || button.disabled) return;
    busy = button.disabled = true;
    button.textContent = "Compacting…";
    Promise.resolve()
      .then(() => ctxApi().CompactSession(id, ""))
      .catch((e) => onError(errText(e)))
      .finally(() => {
        busy = false;
        button.disabled = state.disabled;
        button.textContent = "Compact";
        refresh(id);
      });
  });
  return refresh;
}
