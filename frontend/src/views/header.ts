// The header: the open conversation's agent and title, the agent switch,
// New, read-aloud, the context meter (context.ts) and the stream state.
import type { Actions } from "../actions";
import { mountContext } from "../context";
import { agentColor, agentInitial, h, sessionTitle } from "../view";

const CONN_TEXT: Record<string, string> = {
  idle: "No session open",
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting",
  closed: "Disconnected",
  "no-model": "No model set up",
  "model-unreachable": "Model unreachable",
  "model-broken": "Model stream broken",
};

const CONN_TITLE: Record<string, string> = {
  "no-model": "This assistant has no model yet: use Set up a model.",
  "model-unreachable": "Jarvis is running, but the model server did not answer the last message.",
  "model-broken": "The model's last answer broke off before its end.",
};

export function mountHeader(actions: Actions, flash: (text: string) => void): void {
  const store = actions.store;
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const sel = $<HTMLSelectElement>("agent-switch");
  const conn = $("conn");

  const renderConn = () => {
    const c = store.sessionId ? store.conn.get(store.sessionId) : undefined;
    let st = c?.state ?? "idle";
    let detail = c?.error ?? "";
    // The header says what holds a reply back, not only that the window
    // reaches Jarvis's service: no model, a model server that is down, a
    // stream that broke off.
    const agent = store.agent(store.current()?.agentId ?? store.agentId);
    if (agent?.status?.state === "unconfigured" && (st === "live" || st === "idle")) st = "no-model";
    else if (st === "live") {
      const down = store.modelDown.get(agent?.agentId ?? "");
      if (down) st = `model-${down.kind}`;
      if (down?.message) detail = down.message;
    }
    conn.className = `conn ${st}`;
    conn.dataset.state = st;
    let text = CONN_TEXT[st] ?? st;
    if (st === "reconnecting" && c?.retryInMs) text += ` in ${Math.round(c.retryInMs / 1000)} s`;
    conn.textContent = text;
    conn.title = [CONN_TITLE[st], detail].filter(Boolean).join(" ");
  };
  const render = () => {
    sel.replaceChildren(
      ...store.agents.map((a) => {
        const o = h("option", { value: a.agentId }, `${a.displayName} · ${a.model || a.type} · ${a.status?.state ?? "unknown"}`) as HTMLOptionElement;
        o.selected = a.agentId === store.agentId;
        return o;
      }),
    );
    const s = store.current();
    const a = store.agent(s?.agentId ?? store.agentId);
    const icon = $("current-agent-icon");
    icon.textContent = a ? agentInitial(a.displayName) : "?";
    icon.style.background = a ? agentColor(a.agentId) : "";
    $("session-title").textContent = s ? sessionTitle(s) : "New conversation";
    renderConn();
  };
  store.subscribe("agents", render);
  store.subscribe("sessions", render);
  store.subscribe("conn", (id) => {
    if (id === store.sessionId) renderConn();
  });

  sel.addEventListener("change", () => actions.selectAgent(sel.value));
  $("new-session").addEventListener("click", () => void actions.newSession());
  const refreshContext = mountContext(conn, flash);
  store.subscribe("context", (id) => {
    if (id === store.sessionId) refreshContext(id);
  });
  store.subscribe("messages", () => {
    if (!store.sessionId) refreshContext("");
  });

  const tts = $<HTMLInputElement>("tts");
  if (!("speechSynthesis" in window)) $("tts-label").hidden = true;
  tts.addEventListener("change", () => {
    actions.setSpeak(tts.checked);
    if (!tts.checked) window.speechSynthesis?.cancel();
  });
  render();
}
