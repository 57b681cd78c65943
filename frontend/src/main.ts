// The Jarvis window: sessions grouped by agent, the conversation with
// streamed, sanitized Markdown, tool-call cards, permission prompts, and the
// connection state of the session stream. Everything comes from the Go side
// (bridge.ts); no markup from a message is ever inserted unsanitized.
import "./style.css";
import { api, errText, on, openExternal, type Agent, type AuditEntry, type AuditFilter, type ProvidersInfo, type Session } from "./bridge";
import { auditDetail, auditTable, discoveredList, testReport, upgradeLazyInputs, verifyText } from "./panels";
import { firstRunIntro, keyStorageNote, wireAbout } from "./about";
import { roundTableCard } from "./roundtable";
import { argumentsText, decisiveList, requestedLine, type Prompt } from "./prompt";
import { loadMarkdown, onMarkdownLoaded, plainText, renderReply, showReply, showReplyLater } from "./reply";
import { Transcript, type Effect, type Item } from "./transcript";
import { mountContext } from "./context";
import { agentColor, agentInitial, h, sessionTitle } from "./view";

interface StreamState {
  sessionId: string;
  state: string;
  attempt: number;
  retryInMs?: number;
  error?: string;
}


const state = {
  agents: [] as Agent[],
  sessions: [] as Session[],
  agentId: "",
  sessionId: "",
  transcripts: new Map<string, Transcript>(),
  conn: new Map<string, StreamState>(),
  prompts: [] as Prompt[],
  speak: false,
  attachFor: "",
  renaming: "",
};

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
// Refreshes the header's context meter for a session (context.ts; set by wire).
let refreshContext: (sessionId: string) => void = () => {};
const els = new Map<string, HTMLElement>();

function transcript(id: string): Transcript {
  let t = state.transcripts.get(id);
  if (!t) {
    t = new Transcript();
    state.transcripts.set(id, t);
  }
  return t;
}

function agentOf(id: string): Agent | undefined {
  return state.agents.find((a) => a.agentId === id);
}

function currentSession(): Session | undefined {
  return state.sessions.find((s) => s.sessionId === state.sessionId);
}

// ---------- sidebar ----------

function renderSidebar(): void {
  const box = $("agents");
  box.replaceChildren();
  for (const a of state.agents) {
    const sessions = state.sessions.filter((s) => s.agentId === a.agentId);
    const group = h("section", { class: "agent-group", "data-agent": a.agentId });
    const icon = h("span", { class: "agent-icon", title: `${a.displayName} (${a.type})` }, agentInitial(a.displayName));
    icon.style.background = agentColor(a.agentId);
    const head = h("div", { class: "agent-head" + (a.agentId === state.agentId ? " current" : "") },
      icon,
      h("span", { class: "agent-name" }, a.displayName),
      h("span", { class: `badge type-${a.type}` }, a.type),
      h("span", { class: `status-dot ${a.status?.state ?? "unknown"}`, title: `status: ${a.status?.state ?? "unknown"}${a.status?.detail ? " — " + a.status.detail : ""}` }),
    );
    head.addEventListener("click", () => selectAgent(a.agentId));
    const actions = h("div", { class: "agent-actions" });
    const add = h("button", { class: "small", "data-action": "new", title: `New ${a.displayName} session` }, "+ New");
    add.addEventListener("click", () => void newSession(a.agentId));
    actions.append(add);
    if (a.type === "proxy") {
      const test = h("button", { class: "small", "data-action": "test", title: "Send the agent a sample request and show its response" }, "Test");
      test.addEventListener("click", () => openAgentTest(a));
      actions.append(test);
    }
    if (a.type === "external") {
      const attach = h("button", { class: "small", "data-action": "attach", title: "Attach a session by its ID" }, "Attach…");
      attach.addEventListener("click", () => {
        state.attachFor = state.attachFor === a.agentId ? "" : a.agentId;
        renderSidebar();
      });
      actions.append(attach);
    }
    group.append(head, actions);
    if (state.attachFor === a.agentId) group.append(attachForm(a));
    const list = h("ul", { class: "sessions" });
    for (const s of sessions) list.append(sessionRow(s));
    group.append(list);
    box.append(group);
  }
}

function attachForm(a: Agent): HTMLElement {
  const input = h("input", { type: "text", placeholder: "External session ID", maxlength: "128", "aria-label": "External session ID" }) as HTMLInputElement;
  const err = h("div", { class: "form-error", role: "alert" });
  const go = h("button", { class: "small primary", type: "submit" }, "Attach");
  const form = h("form", { class: "attach-form" }, input, go, err);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    err.textContent = "";
    const id = input.value.trim();
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) {
      err.textContent = "Use 1–128 letters, digits, '-' or '_'.";
      return;
    }
    try {
      const s = await api().AttachSession(a.agentId, id);
      state.attachFor = "";
      await refreshSessions();
      if (!state.sessions.some((x) => x.sessionId === s.sessionId)) state.sessions.unshift(s);
      await openSession(s.sessionId);
    } catch (ex) {
      err.textContent = errText(ex);
    }
  });
  setTimeout(() => input.focus(), 0);
  return form;
}

function sessionRow(s: Session): HTMLElement {
  const li = h("li", { class: "session" + (s.sessionId === state.sessionId ? " current" : ""), "data-session": s.sessionId });
  if (state.renaming === s.sessionId) {
    const input = h("input", { type: "text", value: s.name ?? "", "aria-label": "Session name" }) as HTMLInputElement;
    const done = async (save: boolean) => {
      state.renaming = "";
      if (save && input.value.trim() !== (s.name ?? "")) {
        try {
          await api().RenameSession(s.sessionId, input.value.trim());
          s.name = input.value.trim();
        } catch (ex) {
          flash(errText(ex));
        }
      }
      renderSidebar();
      renderHeader();
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") void done(true);
      if (e.key === "Escape") void done(false);
    });
    input.addEventListener("blur", () => void done(true));
    li.append(input);
    setTimeout(() => input.select(), 0);
    return li;
  }
  const title = h("span", { class: "session-title", title: s.sessionId }, sessionTitle(s));
  title.addEventListener("click", () => void openSession(s.sessionId));
  const menu = h("span", { class: "session-actions" });
  const mk = (glyph: string, label: string, action: string, fn: () => void) => {
    const b = h("button", { class: "icon", title: label, "aria-label": label, "data-action": action }, glyph);
    b.addEventListener("click", (e) => {
      e.stopPropagation();
      fn();
    });
    return b;
  };
  menu.append(
    mk("✎", "Rename", "rename", () => {
      state.renaming = s.sessionId;
      renderSidebar();
    }),
    mk("⟲", "Clear history", "clear", () => void clearSession(s)),
    mk("✕", "Delete", "delete", () => void deleteSession(s)),
  );
  li.append(title, menu);
  return li;
}

async function clearSession(s: Session): Promise<void> {
  if (!confirm(`Clear the history of “${sessionTitle(s)}”? Its name and agent stay.`)) return;
  try {
    await api().ClearSession(s.sessionId);
    transcript(s.sessionId).load([]);
    if (s.sessionId === state.sessionId) renderMessages();
  } catch (ex) {
    flash(errText(ex));
  }
}

async function deleteSession(s: Session): Promise<void> {
  if (!confirm(`Delete “${sessionTitle(s)}”?`)) return;
  try {
    await api().DeleteSession(s.sessionId);
    state.sessions = state.sessions.filter((x) => x.sessionId !== s.sessionId);
    state.transcripts.delete(s.sessionId);
    if (state.sessionId === s.sessionId) {
      state.sessionId = "";
      renderMessages();
    }
    renderSidebar();
    renderHeader();
  } catch (ex) {
    flash(errText(ex));
  }
}

// ---------- header ----------

function renderHeader(): void {
  const sel = $<HTMLSelectElement>("agent-switch");
  sel.replaceChildren(
    ...state.agents.map((a) => {
      const o = h("option", { value: a.agentId }, `${a.displayName} · ${a.type} · ${a.status?.state ?? "unknown"}`) as HTMLOptionElement;
      o.selected = a.agentId === state.agentId;
      return o;
    }),
  );
  const s = currentSession();
  const a = agentOf(s?.agentId ?? state.agentId);
  const icon = $("current-agent-icon");
  icon.textContent = a ? agentInitial(a.displayName) : "?";
  icon.style.background = a ? agentColor(a.agentId) : "";
  $("session-title").textContent = s ? sessionTitle(s) : "New conversation";
  renderConn();
  const t = state.sessionId ? transcript(state.sessionId) : undefined;
  $("stop").hidden = !t?.running;
}

function renderConn(): void {
  const c = state.sessionId ? state.conn.get(state.sessionId) : undefined;
  const el = $("conn");
  const st = c?.state ?? "idle";
  el.className = `conn ${st}`;
  el.dataset.state = st;
  let text = { idle: "No session open", connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting", closed: "Disconnected" }[st] ?? st;
  if (st === "reconnecting" && c?.retryInMs) text += ` in ${Math.round(c.retryInMs / 1000)} s`;
  el.textContent = text;
  el.title = c?.error ?? "";
}

// ---------- messages ----------

function messageEl(it: Item): HTMLElement {
  let el = els.get(it.key);
  if (!el) {
    el = h("div", { class: `msg ${it.kind}`, "data-key": it.key });
    els.set(it.key, el);
  }
  try {
    fill(el, it);
  } catch (ex) {
    // One message must not stop the rest of a conversation from showing.
    console.error("message", it.key, ex);
    el.textContent = it.text;
  }
  return el;
}

function fill(el: HTMLElement, it: Item): void {
  switch (it.kind) {
    case "user":
      el.textContent = it.text;
      break;
    case "assistant":
      // A complete reply shown for the first time (opening a session) is
      // parsed off the window's thread; a streaming one as it grows.
      if (it.final && !el.hasChildNodes()) void showReplyLater(el, it.text); // sanitized
      else showReply(el, it.text, !!it.final); // sanitized
      el.classList.toggle("streaming", !it.final);
      break;
    case "status":
      el.replaceChildren(h("em", {}, it.text));
      break;
    case "thought": {
      const body = h("div", {});
      void showReplyLater(body, it.text); // sanitized
      const d = h("details", { class: "thought" }, h("summary", {}, "Thoughts"), body);
      el.replaceChildren(d);
      break;
    }
    case "error":
      el.textContent = it.text;
      el.setAttribute("role", "alert");
      break;
    case "tool":
      el.replaceChildren(toolCard(it));
      break;
    case "roundtable":
      el.replaceChildren(roundTableCard(it.rt!));
      if (it.rt!.done) el.firstElementChild!.append(runDetailsButton(it.rt!.runId));
      break;
  }
}

// The whole stored run (every agent's answers), on demand.
function runDetailsButton(runId: string): HTMLElement {
  const box = h("div", { class: "rt-answers" });
  const b = h("button", { class: "small", type: "button", "data-action": "rt-answers" }, "Show every agent's answers");
  b.addEventListener("click", async () => {
    b.setAttribute("disabled", "");
    try {
      const run = await api().Roundtable(runId);
      const ul = h("ul", {});
      for (const x of run.answers ?? []) {
        ul.append(h("li", {}, h("b", {}, String(x.agent)), ` · ${x.phase} · ${x.kind}`, h("pre", { class: "audit-pre" }, JSON.stringify(x.data, null, 2))));
      }
      box.replaceChildren(h("div", { class: "hint" }, `Run ${run.id}: ${run.status}, ${run.participants?.length ?? 0} participants, started ${run.created_at}`), ul);
    } catch (ex) {
      box.replaceChildren(h("div", { class: "form-error" }, errText(ex)));
      b.removeAttribute("disabled");
    }
  });
  box.append(b);
  return box;
}

function toolCard(it: Item): HTMLElement {
  const t = it.tool!;
  const badges = h("span", { class: "badges" });
  if (t.risk) badges.append(h("span", { class: `badge risk-${t.risk}`, title: "risk proposed by the service" }, t.risk));
  if (t.class && t.class !== t.risk) badges.append(h("span", { class: `badge risk-${t.class}`, title: "the desktop gate's class" }, t.class));
  const decision = t.pending ? "waiting" : t.source === "service" ? "service" : t.decision ?? "";
  if (t.source === "service") badges.append(h("span", { class: "badge decision-service", "data-decision": "service", title: "run by the agent service itself: no permission prompt" }, t.ok ? "ran in the service" : "failed in the service"));
  else if (t.source === "agent") badges.append(h("span", { class: "badge decision-service", "data-decision": "agent", title: "run by the agent's own program, outside Jarvis's gate" }, "ran inside the agent, not gated"));
  else if (decision) badges.append(h("span", { class: `badge decision-${decision}`, "data-decision": decision }, decision + (t.decidedBy ? ` · ${t.decidedBy}` : "")));
  const card = h("div", { class: "tool-card" + (t.source === "service" ? " service" : ""), "data-call": t.id, "data-decision": decision, "data-tool": t.name },
    h("div", { class: "tool-head" }, h("span", { class: "tool-name" }, `⚙ ${t.name}`), badges),
  );
  if (t.reason) card.append(h("div", { class: "tool-reason" }, t.reason));
  card.append(h("pre", { class: "tool-args" }, JSON.stringify(t.arguments ?? {}, null, 2) + (t.edited ? "\n(edited by you)" : "")));
  if (!t.pending && (t.result || t.error)) {
    card.append(h("pre", { class: "tool-result " + (t.ok ? "ok" : "failed") }, t.ok ? t.result ?? "" : t.error ?? t.result ?? ""));
  }
  return card;
}

function nearBottom(box: HTMLElement): boolean {
  return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
}

// Only the newest messages are in the DOM; older ones are added on demand.
// This keeps appending a delta cheap however long the session is.
const WINDOW = 120;
let shownFrom = 0;

function renderMessages(): void {
  const box = $("messages");
  els.clear();
  if (!state.sessionId) {
    box.replaceChildren(h("div", { class: "empty" }, "Pick a session on the left or just type: a new conversation starts with the selected agent."));
    renderHeader();
    return;
  }
  shownFrom = Math.max(0, transcript(state.sessionId).items.length - WINDOW);
  renderWindow();
  box.scrollTop = box.scrollHeight;
  renderHeader();
}

function renderWindow(): void {
  const box = $("messages");
  const t = transcript(state.sessionId);
  const frag = document.createDocumentFragment();
  if (shownFrom > 0) {
    const more = h("button", { class: "small earlier", type: "button" }, `Show ${Math.min(WINDOW, shownFrom)} earlier messages`);
    more.addEventListener("click", () => {
      const fromBottom = box.scrollHeight - box.scrollTop;
      shownFrom = Math.max(0, shownFrom - WINDOW);
      renderWindow();
      box.scrollTop = box.scrollHeight - fromBottom;
    });
    frag.append(more);
  }
  for (const it of t.items.slice(shownFrom)) frag.append(messageEl(it));
  if (t.items.length === 0) frag.append(h("div", { class: "empty" }, "No messages yet. Say hello — Enter sends, Shift+Enter adds a line."));
  box.replaceChildren(frag);
}

function applyEffect(sessionId: string, eff: Effect): void {
  if (eff.notConfigured) showSetup(eff.notConfigured);
  if (eff.finished && state.speak && sessionId === state.sessionId) speak(eff.finished.text);
  if (sessionId !== state.sessionId) return;
  const box = $("messages");
  const stick = nearBottom(box);
  for (const k of eff.removed) {
    els.get(k)?.remove();
    els.delete(k);
  }
  const t = transcript(sessionId);
  for (const k of new Set(eff.changed)) {
    const it = t.get(k);
    if (!it) continue;
    const existed = els.has(k);
    const el = messageEl(it);
    if (!existed || !el.isConnected) {
      box.querySelector(":scope > .empty")?.remove();
      box.append(el);
    }
  }
  if (stick) box.scrollTop = box.scrollHeight;
  $("stop").hidden = !t.running;
}

// ---------- sessions ----------

async function refreshSessions(): Promise<void> {
  try {
    state.sessions = await api().Sessions("");
  } catch (ex) {
    flash(errText(ex));
  }
  renderSidebar();
}

function selectAgent(agentId: string): void {
  state.agentId = agentId;
  renderSidebar();
  renderHeader();
  checkSetup();
}

// First run with no provider: the service marks the agent "unconfigured"
// and the setup form offers a key or a (discovered) local server.
function checkSetup(): void {
  const a = agentOf(state.agentId);
  if (a?.status?.state === "unconfigured") showSetup(a.status.detail || "This agent has no model provider configured.");
  else if (!setupOpenedByUser) $("setup").hidden = true;
}

async function newSession(agentId: string): Promise<Session | undefined> {
  try {
    const s = await api().NewSession(agentId);
    state.sessions.unshift(s);
    await openSession(s.sessionId);
    return s;
  } catch (ex) {
    flash(errText(ex));
    return undefined;
  }
}

async function openSession(id: string): Promise<void> {
  state.sessionId = id;
  const s = currentSession();
  if (s && s.agentId !== state.agentId) {
    state.agentId = s.agentId;
    checkSetup();
  }
  renderSidebar();
  // The pane follows the sidebar at once, so that it never shows one
  // conversation while the next message would go to another.
  const fresh = !state.transcripts.has(id);
  if (fresh) {
    els.clear();
    $("messages").replaceChildren(h("div", { class: "empty" }, "Loading…"));
    renderHeader();
  } else renderMessages();
  refreshContext(id);
  try {
    // The Markdown renderer loads while the transcript is fetched.
    const [tr] = await Promise.all([api().OpenSession(id), loadMarkdown().catch(() => undefined)]);
    // A transcript already in the window is kept current by its stream;
    // loading it again could drop events that arrived meanwhile.
    if (fresh && !tr.unavailable) transcript(id).load(tr.messages, tr.roundtables ?? [], tr.compactions ?? []);
  } catch (ex) {
    flash(errText(ex));
  }
  if (state.sessionId === id && fresh) renderMessages();
  $("input").focus();
}

async function reload(id: string): Promise<void> {
  try {
    const [tr] = await Promise.all([api().Reload(id), loadMarkdown().catch(() => undefined)]);
    if (!tr.unavailable) transcript(id).load(tr.messages, tr.roundtables ?? [], tr.compactions ?? []);
    if (id === state.sessionId) renderMessages();
  } catch (ex) {
    flash(errText(ex));
  }
}

// A session was renamed, cleared or deleted (here or by another client).
function onSessionChange(id: string, d: { change: string; session?: Session }): void {
  const s = state.sessions.find((x) => x.sessionId === id);
  switch (d?.change) {
    case "deleted":
      state.sessions = state.sessions.filter((x) => x.sessionId !== id);
      state.transcripts.delete(id);
      if (state.sessionId === id) {
        state.sessionId = "";
        renderMessages();
      }
      break;
    case "cleared":
      transcript(id).load([]);
      if (state.sessionId === id) renderMessages();
      break;
    default:
      if (s && d?.session) Object.assign(s, d.session);
  }
  renderSidebar();
  renderHeader();
}

// ---------- composer ----------

async function send(): Promise<void> {
  const input = $<HTMLTextAreaElement>("input");
  const text = input.value;
  if (!text.trim()) return;
  if (!state.sessionId) {
    const s = await newSession(state.agentId || state.agents[0]?.agentId || "general");
    if (!s) return;
  }
  const id = state.sessionId;
  input.value = "";
  const t = transcript(id);
  applyEffect(id, t.localUser(text));
  const s = currentSession();
  if (s) {
    s.lastSnippet = text.slice(0, 80);
    if (!s.name) {
      renderSidebar();
      renderHeader();
    }
  }
  try {
    await api().Send(id, text);
  } catch (ex) {
    applyEffect(id, t.apply({ id: "", type: "error", data: { code: "send_failed", message: errText(ex) } }));
  }
}

async function stop(): Promise<void> {
  if (!state.sessionId) return;
  try {
    await api().Cancel(state.sessionId);
  } catch (ex) {
    flash(errText(ex));
  }
}

// ---------- permission prompt ----------

let shownPrompt = "";

function showPrompt(): void {
  const dlg = $("prompt");
  const p = state.prompts[0];
  if (!p) {
    dlg.hidden = true;
    shownPrompt = "";
    return;
  }
  dlg.hidden = false;
  if (shownPrompt === p.id) return; // keep the user's edits
  shownPrompt = p.id;
  dlg.dataset.prompt = p.id;
  const s = state.sessions.find((x) => x.sessionId === p.session_id);
  $("prompt-title").textContent = `Allow “${p.tool}”?`;
  $("prompt-meta").replaceChildren(
    h("span", { class: `badge risk-${p.risk}` }, p.risk + (p.destructive ? " · destructive" : "")),
    h("span", {}, ` requested in ${s ? sessionTitle(s) : p.session_id ?? "a session"}`),
  );
  $("prompt-decisive").replaceChildren(decisiveList(p));
  $("prompt-requested").textContent = requestedLine(p);
  $("prompt-desc").textContent = p.description ?? "";
  $("prompt-reason").textContent = p.reason ?? "";
  $("prompt-model-reason").textContent = p.model_reason ? `The agent says: ${p.model_reason}` : "";
  const args = $<HTMLTextAreaElement>("prompt-args");
  args.value = argumentsText(p);
  args.dataset.original = args.value;
  $("prompt-error").textContent = "";
  for (const b of Array.from(dlg.querySelectorAll<HTMLButtonElement>("button[data-choice]"))) {
    b.hidden = !p.choices.includes(b.dataset.choice!);
  }
  const more = state.prompts.length > 1 ? ` · ${state.prompts.length - 1} more waiting` : "";
  const deadline = Date.parse(p.deadline);
  const tick = () => {
    if (shownPrompt !== p.id) return;
    const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    $("prompt-timer").textContent = `Denied automatically in ${left} s${more}`;
    if (left > 0) setTimeout(tick, 1000);
  };
  tick();
  ($("prompt").querySelector("button[data-choice=once]") as HTMLButtonElement).focus();
}

async function answerPrompt(choice: string): Promise<void> {
  const p = state.prompts[0];
  if (!p) return;
  const args = $<HTMLTextAreaElement>("prompt-args");
  let edited = "";
  if (choice !== "deny" && args.value !== args.dataset.original) {
    try {
      const v = JSON.parse(args.value);
      if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("the arguments must be a JSON object");
      edited = JSON.stringify(v);
    } catch (ex) {
      $("prompt-error").textContent = `Not valid JSON: ${errText(ex)}`;
      return;
    }
  }
  try {
    await api().ResolvePrompt(p.id, choice, edited);
  } catch (ex) {
    $("prompt-error").textContent = errText(ex);
  }
  // The queue comes back as a "tool:prompts" event.
}

// ---------- setup, notices, speech ----------

let setupOpenedByUser = false;
let firstRender = true; // the first look at the providers picks the tab

function setupTab(tab: string): void {
  for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>("#setup [data-tab]"))) {
    b.classList.toggle("primary", b.dataset.tab === tab);
    b.setAttribute("aria-selected", String(b.dataset.tab === tab));
  }
  $("setup-compatible").hidden = tab !== "compatible";
  $("setup-openai").hidden = tab !== "openai";
}

function showSetup(message: string, byUser = false): void {
  setupOpenedByUser = byUser;
  const wasHidden = $("setup").hidden;
  $("setup").hidden = false;
  $("setup-message").textContent = message;
  if (wasHidden) void loadProviders();
}

async function loadProviders(): Promise<void> {
  const box = $("setup-discovered");
  box.replaceChildren(h("p", { class: "hint" }, "Looking for local model servers…"));
  try {
    const p = await api().Providers();
    renderProviders(p);
  } catch (ex) {
    box.replaceChildren(h("div", { class: "form-error" }, errText(ex)));
  }
}

function renderProviders(p: ProvidersInfo): void {
  $("setup-discovered").replaceChildren(discoveredList(p, (baseUrl, model) => {
    $<HTMLInputElement>("setup-baseurl").value = baseUrl;
    $<HTMLInputElement>("setup-model").value = model;
    void saveProvider("openai-compatible");
  }));
  const cur = p.providers?.["openai-compatible"];
  const base = $<HTMLInputElement>("setup-baseurl");
  if (cur?.baseUrl && !base.value) base.value = cur.baseUrl;
  const model = $<HTMLInputElement>("setup-model");
  if (cur?.model && !model.value) model.value = cur.model;
  const note = keyStorageNote(p);
  $("setup-key-hint").textContent = note.text;
  $("setup-key-hint").classList.toggle("warn", note.warn);
  $("setup-intro").hidden = p.configured;
  // A new user reads the explanation; the service's own words are one click away.
  $<HTMLDetailsElement>("setup-details").open = p.configured;
  $("setup-intro").textContent = firstRunIntro(p);
  if (firstRender && !p.configured && !p.discovered?.length && !setupOpenedByUser) setupTab("openai"); // nothing local: ask for a key
  firstRender = false;
  if (p.configured) $("setup-message").textContent = `Configured: ${p.defaultProvider}. You can switch provider here.`;
  else if (p.problem && !$("setup-message").textContent) $("setup-message").textContent = p.problem;
}

async function saveProvider(provider: string): Promise<void> {
  const err = $("setup-error");
  err.textContent = "";
  const key = $<HTMLInputElement>("setup-apikey");
  const req =
    provider === "openai"
      ? { provider, apiKey: key.value, model: $<HTMLInputElement>("setup-openai-model").value }
      : { provider, baseUrl: $<HTMLInputElement>("setup-baseurl").value, model: $<HTMLInputElement>("setup-model").value };
  const forms = Array.from(document.querySelectorAll<HTMLButtonElement>("#setup button"));
  forms.forEach((b) => b.setAttribute("disabled", ""));
  try {
    const p = await api().SetProvider(req);
    key.value = ""; // never kept in the page
    if (!p.configured) {
      err.textContent = p.problem || "Saved, but the agent still cannot chat.";
      return;
    }
    $("setup").hidden = true;
    setupOpenedByUser = false;
    const note = keyStorageNote(p);
    if (req.provider === "openai" && note.warn) flash(`Provider saved, but: ${note.text}`);
    else flash(`Provider saved: ${p.defaultProvider}${req.model ? ` · ${req.model}` : ""}`, true);
    await refreshAgents();
  } catch (ex) {
    key.value = "";
    err.textContent = errText(ex);
  } finally {
    forms.forEach((b) => b.removeAttribute("disabled"));
  }
}

async function refreshAgents(): Promise<void> {
  try {
    state.agents = await api().Agents();
  } catch (ex) {
    flash(errText(ex));
  }
  renderSidebar();
  renderHeader();
}

// ---------- audit log ----------

const audit = { entries: [] as AuditEntry[], selected: undefined as number | undefined };

function auditFilter(): AuditFilter {
  const f = new FormData($<HTMLFormElement>("audit-filters"));
  const g = (k: string) => String(f.get(k) ?? "");
  return { tool: g("tool"), decision: g("decision"), decidedBy: g("decidedBy"), sessionId: g("sessionId"), since: g("since"), until: g("until"), limit: 500 };
}

function auditStatus(text: string, cls = ""): void {
  const el = $("audit-status");
  el.textContent = text;
  el.className = `audit-status ${cls}`;
}

async function openAudit(): Promise<void> {
  upgradeLazyInputs($("audit-filters"));
  $("audit").hidden = false;
  await loadAudit();
}

async function loadAudit(): Promise<void> {
  try {
    const p = await api().AuditList(auditFilter());
    audit.entries = p.entries ?? [];
    if (!audit.entries.some((e) => e.id === audit.selected)) audit.selected = audit.entries[0]?.id;
    renderAudit();
    auditStatus(`${audit.entries.length}${p.more ? "+" : ""} row${audit.entries.length === 1 ? "" : "s"}`);
  } catch (ex) {
    auditStatus(errText(ex), "bad");
  }
}

function renderAudit(): void {
  $("audit-list").replaceChildren(...auditTable(audit.entries, audit.selected, (e) => {
    audit.selected = e.id;
    renderAudit();
  }));
  $("audit-detail").replaceChildren(auditDetail(audit.entries.find((e) => e.id === audit.selected)));
}

async function verifyAudit(): Promise<void> {
  auditStatus("Verifying…");
  try {
    const v = verifyText(await api().AuditVerify());
    auditStatus(v.text, v.ok ? "good" : "bad");
  } catch (ex) {
    auditStatus(errText(ex), "bad");
  }
}

async function exportAudit(): Promise<void> {
  try {
    const x = await api().AuditExportJSONL(auditFilter());
    if (x.cancelled) auditStatus("Export cancelled");
    else auditStatus(`Exported ${x.rows} row${x.rows === 1 ? "" : "s"} to ${x.path}`, "good");
  } catch (ex) {
    auditStatus(errText(ex), "bad");
  }
}

// ---------- proxy agent test ----------

let testing: Agent | undefined;

function openAgentTest(a: Agent): void {
  testing = a;
  $("agent-test-title").textContent = `Test “${a.displayName}”`;
  $("agent-test-report").replaceChildren(h("p", { class: "hint" }, "Sends the agent one real request with sample values and shows what came back."));
  $("agent-test").hidden = false;
  $("agent-test-text").focus();
}

async function runAgentTest(): Promise<void> {
  if (!testing) return;
  const box = $("agent-test-report");
  box.replaceChildren(h("p", { class: "hint" }, "Waiting for the agent…"));
  try {
    box.replaceChildren(testReport(await api().TestAgent(testing.agentId, $<HTMLInputElement>("agent-test-text").value)));
  } catch (ex) {
    box.replaceChildren(h("div", { class: "form-error test-error" }, errText(ex)));
  }
}

function flash(msg: string, good = false): void {
  const el = $("notice");
  el.classList.toggle("good", good);
  el.textContent = msg;
  el.hidden = false;
  clearTimeout((flash as any).t);
  (flash as any).t = setTimeout(() => (el.hidden = true), 6000);
}

function speak(text: string): void {
  if (!("speechSynthesis" in window)) return;
  const u = new SpeechSynthesisUtterance(plainText(text).slice(0, 2000));
  window.speechSynthesis.speak(u);
}

// ---------- wiring ----------

// A config file deleted while the service runs is reported by the service
// (it keeps the config it had); the window says so when it comes to the front.
async function checkServiceWarning(): Promise<void> {
  try {
    const info = await api().Info();
    if (info.warning) flash(`Service: ${info.warning}`);
  } catch {
    // the connection state says it
  }
}

function wire(): void {
  window.addEventListener("focus", () => void checkServiceWarning());
  const input = $<HTMLTextAreaElement>("input");
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void send();
    }
  });
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    void send();
  });
  $("stop").addEventListener("click", () => void stop());
  $<HTMLSelectElement>("agent-switch").addEventListener("change", (e) => selectAgent((e.target as HTMLSelectElement).value));
  $("new-session").addEventListener("click", () => void newSession(state.agentId || state.agents[0]?.agentId || "general"));
  refreshContext = mountContext($("conn"), flash);
  const tts = $<HTMLInputElement>("tts");
  if (!("speechSynthesis" in window)) $("tts-label").hidden = true;
  tts.addEventListener("change", () => {
    state.speak = tts.checked;
    if (!tts.checked) window.speechSynthesis?.cancel();
  });
  $("setup-close").addEventListener("click", () => {
    $("setup").hidden = true;
    setupOpenedByUser = false;
  });
  $("setup-rescan").addEventListener("click", () => void loadProviders());
  $("open-setup").addEventListener("click", () => {
    if ($("setup").hidden) showSetup("", true);
    else $("setup").hidden = true;
  });
  for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>("#setup [data-tab]"))) {
    b.addEventListener("click", () => setupTab(b.dataset.tab!));
  }
  setupTab("compatible");
  for (const id of ["setup-compatible", "setup-openai"]) {
    $(id).addEventListener("submit", (e) => {
      e.preventDefault();
      void saveProvider((e.currentTarget as HTMLElement).dataset.provider!);
    });
  }
  $("open-audit").addEventListener("click", () => void openAudit());
  wireAbout(flash);
  $("audit-close").addEventListener("click", () => ($("audit").hidden = true));
  $("audit").addEventListener("keydown", (e) => {
    if (e.key === "Escape") $("audit").hidden = true;
  });
  $("audit-filters").addEventListener("submit", (e) => {
    e.preventDefault();
    void loadAudit();
  });
  $("audit-filters").addEventListener("reset", () => setTimeout(() => void loadAudit(), 0));
  $("audit-verify").addEventListener("click", () => void verifyAudit());
  $("audit-export").addEventListener("click", () => void exportAudit());
  $("agent-test-close").addEventListener("click", () => ($("agent-test").hidden = true));
  $("agent-test").addEventListener("keydown", (e) => {
    if (e.key === "Escape") $("agent-test").hidden = true;
  });
  $("agent-test-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void runAgentTest();
  });
  for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>("#prompt button[data-choice]"))) {
    b.addEventListener("click", () => void answerPrompt(b.dataset.choice!));
  }
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Escape") void answerPrompt("deny");
  });
  // Links in replies open in the user's browser, never in this window.
  document.addEventListener("click", (e) => {
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a) return;
    e.preventDefault();
    const href = a.getAttribute("href");
    if (href && a.dataset.external) openExternal(href);
  });

  on("stream:event", (ev: { sessionId: string; id: string; type: string; data: any }) => {
    const t = transcript(ev.sessionId);
    const eff = t.apply(ev);
    applyEffect(ev.sessionId, eff);
    if (eff.reload) void reload(ev.sessionId);
    if (ev.type === "session") onSessionChange(ev.sessionId, ev.data);
    if (ev.sessionId === state.sessionId && /^(assistant\.final|error|session\.compacted)$/.test(ev.type)) refreshContext(ev.sessionId);
    if (ev.type === "user.message" || ev.type === "assistant.final") {
      const s = state.sessions.find((x) => x.sessionId === ev.sessionId);
      if (s && ev.data?.text) s.lastSnippet = String(ev.data.text).slice(0, 80);
    }
  });
  on("stream:state", (st: StreamState) => {
    state.conn.set(st.sessionId, st);
    if (st.sessionId === state.sessionId) renderConn();
  });
  on("tool:prompts", (ps: Prompt[] | null) => {
    state.prompts = ps ?? [];
    showPrompt();
  });
  on("tool:decision", (d: any) => applyEffect(d.sessionId, transcript(d.sessionId).decide(d)));
  on("send:error", (d: { sessionId: string; code: string; message: string }) => {
    const t = transcript(d.sessionId);
    applyEffect(d.sessionId, t.apply({ id: "", type: "error", data: { code: d.code, message: d.message } }));
  });
}

// Replies rendered before the Markdown renderer loaded are shown again.
function refill(): void {
  if (!state.sessionId) return;
  const t = transcript(state.sessionId);
  for (const [key, el] of els) {
    const it = t.get(key);
    if (it && (it.kind === "assistant" || it.kind === "thought" || it.kind === "roundtable")) fill(el, it);
  }
}

// Benchmark hooks for the e2e build's measurements: they act on a synthetic
// transcript shown in the window and reach nothing on the Go side.
function benchHooks(): void {
  (window as any).jarvisBench = {
    ready: () => loadMarkdown(),
    load(n: number): number {
      const t0 = performance.now();
      const t = new Transcript();
      t.synthetic(n);
      state.transcripts.set("bench", t);
      state.sessionId = "bench";
      renderMessages();
      void $("messages").offsetHeight;
      return performance.now() - t0;
    },
    delta(text: string): number {
      const t0 = performance.now();
      const t = transcript("bench");
      applyEffect("bench", t.apply({ id: "", type: "assistant.delta", data: { text, turn_id: "bench" } }));
      void $("messages").offsetHeight; // include layout
      return performance.now() - t0;
    },
    // Shows a whole reply in a new message at the end (as opening a session
    // does), with showReply or, for the baseline, one renderReply.
    show(text: string, baseline: boolean): number {
      const el = h("div", { class: "msg assistant" });
      $("messages").append(el);
      const t0 = performance.now();
      if (baseline) el.innerHTML = renderReply(text); // sanitized
      else showReply(el, text, true);
      void $("messages").offsetHeight;
      const ms = performance.now() - t0;
      el.remove();
      return ms;
    },
    // Shows a complete reply through the parsing worker (as opening a
    // session does) and says what the worker did: the e2e checks that it
    // runs under the window's Content-Security-Policy.
    async offThread(text: string): Promise<{ html: string; unavailable: boolean; abandoned: number }> {
      const m = await loadMarkdown();
      const el = h("div", { class: "msg assistant" });
      $("messages").append(el);
      await m.showReplyLater(el, text);
      const html = el.innerHTML;
      el.remove();
      return { html, ...m.parseWorkerState() };
    },
    // The same, rendering the whole reply again into a new element, as every
    // delta was shown before showReply: the baseline of the long-reply figure.
    deltaWhole(text: string): number {
      const t0 = performance.now();
      const t = transcript("bench");
      for (const k of t.apply({ id: "", type: "assistant.delta", data: { text, turn_id: "bench" } }).changed) {
        const el = els.get(k);
        const it = t.get(k);
        if (!el || !it) continue;
        const whole = el.cloneNode(false) as HTMLElement;
        whole.innerHTML = renderReply(it.text); // sanitized
        el.replaceWith(whole);
        els.set(k, whole);
      }
      void $("messages").offsetHeight;
      return performance.now() - t0;
    },
  };
}

async function start(): Promise<void> {
  onMarkdownLoaded(refill);
  wire();
  benchHooks();
  renderMessages();
  try {
    const info = await api().Info();
    if (info.error) flash(`Service: ${info.error}`);
    else if (info.warning) flash(`Service: ${info.warning}`);
    state.agents = await api().Agents();
    state.agentId = state.agents[0]?.agentId ?? "general";
  } catch (ex) {
    flash(errText(ex));
  }
  await refreshSessions();
  renderHeader();
  try {
    state.prompts = (await api().PendingPrompts()) ?? [];
    showPrompt();
  } catch {
    // no prompts
  }
  const first = state.sessions[0];
  if (first) await openSession(first.sessionId);
  checkSetup();
  document.body.dataset.ready = "1";
}

void start();
