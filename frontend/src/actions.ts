// What the user and the Go side do to the window's state: open, send, stop,
// rename, delete, answer a prompt, and the events of app (stream events,
// stream state, prompts, decisions). Each action calls the bridge (the
// bound App object) and updates the store, which tells the views. No DOM:
// the actions are unit-tested against a fake of the bridge.
import { errText, type AppAPI, type Session } from "./bridge";
import { conversationJSON, conversationMarkdown } from "./export";
import { sessionTitle, titleFrom } from "./view";
import type { PolicyRule, Prompt } from "./prompt";
import type { StreamState, Store } from "./store";
import type { Effect, StreamEvent } from "./transcript";

/** Error codes that say the model server could not be reached (service/llm). */
const MODEL_DOWN = new Set(["upstream_unreachable", "upstream_timeout"]);

/** What the window says when no model is set up (never a variable or a config key). */
export const NO_MODEL = "No model is set up for this assistant yet. Set up a model to start chatting.";

export class Actions {
  constructor(
    readonly store: Store,
    readonly api: () => AppAPI,
    // Loads what a shown reply needs (the Markdown renderer) while a transcript is fetched.
    private readonly prepare: () => Promise<unknown> = () => Promise.resolve(),
  ) {}

  private notice(text: string, good = false): void {
    this.store.publish("notice", { text, good });
  }

  /** Applies a transcript change and tells the views. */
  apply(sessionId: string, eff: Effect): void {
    if (eff.notConfigured) this.store.publish("setup", { message: eff.notConfigured });
    this.store.publish("effect", { sessionId, eff });
  }

  /** The first load: service state, agents, sessions, prompts, the newest session. */
  async start(): Promise<void> {
    const s = this.store;
    try {
      const info = await this.api().Info();
      if (info.error) this.notice(`Service: ${info.error}`);
      else if (info.pendingConfig) s.publish("configApproval", info.pendingConfig);
      else if (info.warning) this.notice(`Service: ${info.warning}`);
      s.agents = await this.api().Agents();
      s.agentId = s.agents[0]?.agentId ?? "general";
    } catch (ex) {
      this.notice(errText(ex));
    }
    s.publish("agents");
    await this.refreshSessions();
    try {
      s.prompts = (await this.api().PendingPrompts()) ?? [];
      s.publish("prompts");
    } catch {
      // no prompts
    }
    await this.loadRules();
    const first = s.sessions[0];
    if (first) await this.openSession(first.sessionId);
    this.checkSetup();
  }

  /** A config file deleted while the service runs is reported when the window comes to the front. */
  async checkServiceWarning(): Promise<void> {
    try {
      const info = await this.api().Info();
      if (info.pendingConfig) this.store.publish("configApproval", info.pendingConfig);
      else if (info.warning) this.notice(`Service: ${info.warning}`);
    } catch {
      // the connection state says it
    }
  }

  /** Approves the changed config file the dialog showed; "" or the error in words. */
  async approveConfig(hash: string): Promise<string> {
    try {
      await this.api().ApproveConfig(hash);
    } catch (ex) {
      return errText(ex);
    }
    await this.refreshAgents();
    return "";
  }

  async refreshAgents(): Promise<void> {
    try {
      this.store.agents = await this.api().Agents();
    } catch (ex) {
      this.notice(errText(ex));
    }
    this.store.publish("agents");
  }

  /** Loads the first page of the session list (more come with moreSessions). */
  async refreshSessions(): Promise<void> {
    try {
      const page = await this.api().SessionsPage("", "");
      this.store.sessions = page.sessions ?? [];
      this.store.sessionsCursor = page.nextCursor ?? "";
    } catch (ex) {
      this.notice(errText(ex));
    }
    this.store.publish("sessions");
  }

  /** Loads the next page of the session list, once at a time. */
  async moreSessions(): Promise<void> {
    const st = this.store;
    if (!st.sessionsCursor || st.sessionsLoading) return;
    st.sessionsLoading = true;
    st.publish("sessions");
    try {
      const page = await this.api().SessionsPage("", st.sessionsCursor);
      // A session made or changed meanwhile is already listed: keep it once.
      const have = new Set(st.sessions.map((s) => s.sessionId));
      st.sessions.push(...(page.sessions ?? []).filter((s) => !have.has(s.sessionId)));
      st.sessionsCursor = page.nextCursor ?? "";
    } catch (ex) {
      this.notice(`Loading more conversations failed: ${errText(ex)}`);
    } finally {
      st.sessionsLoading = false;
    }
    st.publish("sessions");
  }

  selectAgent(agentId: string): void {
    this.store.agentId = agentId;
    this.store.publish("agents");
    this.checkSetup();
  }

  /** First run with no provider: the service marks the agent "unconfigured" and the setup form opens. */
  checkSetup(): void {
    const a = this.store.agent(this.store.agentId);
    if (a?.status?.state === "unconfigured") this.store.publish("setup", { message: a.status.detail || "This agent has no model provider configured." });
    else this.store.publish("setup", { message: "" });
  }

  async newSession(agentId = this.store.defaultAgent()): Promise<Session | undefined> {
    try {
      const s = await this.api().NewSession(agentId);
      this.store.sessions.unshift(s);
      await this.openSession(s.sessionId);
      return s;
    } catch (ex) {
      this.notice(errText(ex));
      return undefined;
    }
  }

  async attachSession(agentId: string, externalId: string): Promise<void> {
    const s = await this.api().AttachSession(agentId, externalId);
    this.store.attachFor = "";
    await this.refreshSessions();
    if (!this.store.session(s.sessionId)) this.store.sessions.unshift(s);
    await this.openSession(s.sessionId);
  }

  async openSession(id: string): Promise<void> {
    const st = this.store;
    st.sessionId = id;
    const s = st.current();
    if (s && s.agentId !== st.agentId) {
      st.agentId = s.agentId;
      st.publish("agents");
      this.checkSetup();
    }
    st.publish("sessions");
    st.publish("context", id);
    // The pane follows the sidebar at once, so that it never shows one
    // conversation while the next message would go to another.
    const fresh = !st.transcripts.has(id);
    st.publish("messages", { loading: fresh });
    try {
      const [tr] = await Promise.all([this.api().OpenSession(id), this.prepare().catch(() => undefined)]);
      // A transcript already in the window is kept current by its stream;
      // loading it again could drop events that arrived meanwhile.
      if (fresh && !tr.unavailable) {
        st.transcript(id).load(tr.messages, tr.roundtables ?? [], tr.compactions ?? [], tr.versions ?? []);
        await this.restoreDecisions(id);
      }
    } catch (ex) {
      this.notice(errText(ex));
    }
    if (st.sessionId === id && fresh) st.publish("messages", {});
    st.publish("opened", id);
  }

  async reload(id: string): Promise<void> {
    try {
      const [tr] = await Promise.all([this.api().Reload(id), this.prepare().catch(() => undefined)]);
      if (!tr.unavailable) {
        this.store.transcript(id).load(tr.messages, tr.roundtables ?? [], tr.compactions ?? [], tr.versions ?? []);
        await this.restoreDecisions(id);
      }
      if (id === this.store.sessionId) this.store.publish("messages", {});
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  /** Shows the rename field of a session ("" closes it). */
  startRename(id: string): void {
    this.store.renaming = id;
    this.store.publish("sessions");
  }

  /** Opens or closes the "Attach" form of an external agent. */
  toggleAttach(agentId: string): void {
    this.store.attachFor = this.store.attachFor === agentId ? "" : agentId;
    this.store.publish("sessions");
  }

  setSpeak(on: boolean): void {
    this.store.speak = on;
  }

  // The tool cards' risk and decision badges, from the audit log (a window
  // without tool calls has none to show).
  private async restoreDecisions(id: string): Promise<void> {
    try {
      this.store.transcript(id).restoreDecisions((await this.api().SessionDecisions(id)) ?? []);
    } catch {
      // no audit log in this window: the cards keep what the history says
    }
  }

  async renameSession(id: string, name: string): Promise<void> {
    const s = this.store.session(id);
    this.store.renaming = "";
    if (s && name !== (s.name ?? "")) {
      try {
        await this.api().RenameSession(id, name);
        s.name = name;
      } catch (ex) {
        this.notice(errText(ex));
      }
    }
    this.store.publish("sessions");
  }

  async pinSession(id: string, pinned: boolean): Promise<void> {
    try {
      await this.api().PinSession(id, pinned);
      const s = this.store.session(id);
      if (s) s.pinnedAt = pinned ? new Date().toISOString() : undefined;
    } catch (ex) {
      this.notice(errText(ex));
    }
    this.store.publish("sessions");
  }

  async clearSession(id: string): Promise<void> {
    try {
      await this.api().ClearSession(id);
      this.store.transcript(id).load([]);
      if (id === this.store.sessionId) this.store.publish("messages", {});
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  /**
   * Deletes a session after a grace period in which the user can undo: it
   * leaves the list at once, and the service deletes it only when the time
   * is up. Returns the function that undoes it.
   */
  deleteLater(id: string, graceMs = 6000): () => void {
    const st = this.store;
    const s = st.session(id);
    const at = st.sessions.findIndex((x) => x.sessionId === id);
    const wasOpen = st.sessionId === id;
    if (!s) return () => {};
    st.sessions = st.sessions.filter((x) => x.sessionId !== id);
    if (wasOpen) {
      st.sessionId = "";
      st.publish("messages", {});
    }
    st.publish("sessions");
    const timer = setTimeout(() => void this.deleteSession(id), graceMs);
    return () => {
      clearTimeout(timer);
      if (st.session(id)) return;
      st.sessions.splice(Math.min(at, st.sessions.length), 0, s);
      st.publish("sessions");
      if (wasOpen) void this.openSession(id);
    };
  }

  async deleteSession(id: string): Promise<void> {
    try {
      await this.api().DeleteSession(id);
      this.forget(id);
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  private forget(id: string): void {
    const st = this.store;
    st.sessions = st.sessions.filter((x) => x.sessionId !== id);
    st.transcripts.delete(id);
    if (st.sessionId === id) {
      st.sessionId = "";
      st.publish("messages", {});
    }
    st.publish("sessions");
  }

  /** Sends text to the open session, starting one with the selected agent if none is open; false: nothing was sent. */
  async send(text: string, images: string[] = []): Promise<boolean> {
    if (!text.trim() && !images.length) return false;
    if (!this.canSend()) return false;
    const st = this.store;
    if (!st.sessionId && !(await this.newSession())) return false;
    const id = st.sessionId;
    const t = st.transcript(id);
    const first = !t.items.some((it) => it.kind === "user");
    this.apply(id, t.localUser(text, images.length));
    const s = st.current();
    if (s) {
      s.lastSnippet = text.slice(0, 80);
      // Named once, from the first message: the title does not change every turn.
      if (!s.name && first && titleFrom(text)) void this.renameSession(id, titleFrom(text));
    }
    try {
      if (images.length) await this.api().SendWithImages(id, text, images); // attach.ts
      else await this.api().Send(id, text);
    } catch (ex) {
      this.apply(id, t.apply({ id: "", type: "error", data: { code: "send_failed", message: errText(ex) } }));
    }
    return true;
  }

  /**
   * Asks again what was asked in the turn of the item with key (Regenerate
   * on a reply, Retry on an error): the new answer takes the old one's place,
   * which stays as the other version ("< 1/2 >"); the message is not posted
   * twice and the model sees only the shown version.
   */
  async askAgain(key: string): Promise<boolean> {
    const id = this.store.sessionId;
    if (!id) return false;
    const { turnId, text } = this.store.transcript(id).turnOf(key);
    if (!turnId || !text) return false;
    return this.sendVersion(id, turnId, text);
  }

  /** Edit in place: the message of the item with key, changed to text; the conversation branches there. */
  async editMessage(key: string, text: string): Promise<boolean> {
    const id = this.store.sessionId;
    if (!id || !text.trim()) return false;
    const { turnId, text: was } = this.store.transcript(id).turnOf(key);
    if (!turnId) return false;
    if (text === was) return false;
    return this.sendVersion(id, turnId, text);
  }

  // Sessions whose running turn is a new version: read again when it ends,
  // for the versions the service now lists.
  private versioned = new Set<string>();

  private async sendVersion(id: string, turnId: string, text: string): Promise<boolean> {
    if (!this.canSend()) return false;
    const t = this.store.transcript(id);
    if (t.running) return false;
    this.apply(id, t.replaceTurn(turnId, text));
    this.versioned.add(id);
    try {
      await this.api().SendVersion(id, turnId, text);
    } catch (ex) {
      this.versioned.delete(id);
      this.apply(id, t.apply({ id: "", type: "error", data: { code: "send_failed", message: errText(ex) } }));
    }
    return true;
  }

  /** Shows another version of a turn ("< 1/2 >"): the conversation's branch through it. */
  async showVersion(turnId: string): Promise<void> {
    const id = this.store.sessionId;
    if (!id || !turnId) return;
    try {
      await this.api().ShowVersion(id, turnId);
    } catch (ex) {
      this.notice(errText(ex));
      return;
    }
    await this.reload(id);
    this.store.publish("context", id);
  }

  /**
   * Whether a message may be sent: not while the selected agent has no
   * model (the setup form opens instead, with a plain "Set up a model").
   */
  canSend(): boolean {
    const a = this.store.agent(this.store.current()?.agentId ?? this.store.agentId);
    if (a?.status?.state !== "unconfigured") return true;
    this.store.publish("setup", { message: NO_MODEL });
    this.notice(NO_MODEL);
    return false;
  }

  /** Exports a conversation as Markdown ("md") or JSON; says where it went in a notice. */
  async exportSession(id: string, format: "md" | "json"): Promise<void> {
    const st = this.store;
    const s = st.session(id);
    try {
      if (!st.transcripts.has(id)) {
        const tr = await this.api().OpenSession(id);
        st.transcript(id).load(tr.messages, tr.roundtables ?? [], tr.compactions ?? [], tr.versions ?? []);
      }
      const items = st.transcript(id).items;
      const agent = st.agent(s?.agentId ?? "")?.displayName ?? s?.agentId ?? "";
      const content = format === "md" ? conversationMarkdown(s ? sessionTitle(s) : id, items, agent) : conversationJSON(s, items);
      const x = await this.api().ExportConversation(id, format, content);
      if (!x.cancelled) this.notice(`Exported to ${x.path}`, true);
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  /** Exports every conversation as Markdown ("md") or JSON; says where it went in a notice. */
  async exportAll(format: "md" | "json"): Promise<void> {
    try {
      const x = await this.api().ExportAllConversations(format);
      if (!x.cancelled) this.notice(`Exported ${x.conversations ?? 0} conversations to ${x.path}`, true);
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  async stop(): Promise<void> {
    if (!this.store.sessionId) return;
    try {
      await this.api().Cancel(this.store.sessionId);
    } catch (ex) {
      this.notice(errText(ex));
    }
  }

  /**
   * Answers the first prompt of the queue. edited is the arguments' text as
   * the user left it, or "" when unchanged. Returns an error to show in the
   * prompt, or "" (the queue comes back as a "tool:prompts" event).
   */
  async answerPrompt(choice: string, edited: string, scope = 0, why = "", chat = ""): Promise<string> {
    const p = this.store.prompts[0];
    if (!p) return "";
    let args = "";
    if (choice !== "deny" && edited) {
      try {
        const v = JSON.parse(edited);
        if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("the arguments must be a JSON object");
        args = JSON.stringify(v);
      } catch (ex) {
        return `Not valid JSON: ${errText(ex)}`;
      }
    }
    try {
      await this.api().AnswerPrompt(p.id, {
        choice, edited_arguments: args, scope: choice === "always" ? scope : 0,
        why: choice === "deny" ? why : "", chat: choice === "always" ? chat : "",
      });
    } catch (ex) {
      return errText(ex);
    }
    return "";
  }

  // ---------- permissions ----------

  /** Reads the policy's rules and the workspace; "" when the window runs no tools. */
  async loadRules(): Promise<string> {
    try {
      const p = await this.api().PermissionRules();
      this.store.workspace = p.workspace;
      this.store.rules = p.rules ?? [];
      this.store.defaultCommands = p.default_commands ?? [];
      this.store.sandbox = p.sandbox ?? [];
      this.store.grants = p.grants ?? [];
      this.store.knownTools = p.tools ?? [];
      return "";
    } catch (ex) {
      this.store.rules = [];
      return errText(ex);
    } finally {
      this.store.publish("rules");
    }
  }

  /** Revokes rule i as listed; the list is read again either way. Returns an error or "". */
  async revokeRule(i: number): Promise<string> {
    const seen = this.store.rules[i];
    let err = "";
    try {
      if (seen) await this.api().RevokeRule(i, seen);
    } catch (ex) {
      err = errText(ex);
    }
    return (await this.loadRules()) || err;
  }

  /** Adds a rule (a command rule from the Permissions page). Returns an error or "". */
  async addRule(next: PolicyRule): Promise<string> {
    let err = "";
    try {
      await this.api().AddRule(next);
    } catch (ex) {
      err = errText(ex);
    }
    return (await this.loadRules()) || err;
  }

  /** Replaces rule i as listed with next. Returns an error or "". */
  async editRule(i: number, next: PolicyRule): Promise<string> {
    const seen = this.store.rules[i];
    let err = "";
    try {
      if (seen) await this.api().EditRule(i, seen, next);
    } catch (ex) {
      err = errText(ex);
    }
    return (await this.loadRules()) || err;
  }

  // ---------- events of app ----------

  onStreamEvent(ev: StreamEvent & { sessionId: string }): void {
    const st = this.store;
    const eff = st.transcript(ev.sessionId).apply(ev);
    this.apply(ev.sessionId, eff);
    if (eff.reload) void this.reload(ev.sessionId);
    else if ((ev.type === "assistant.final" || ev.type === "error") && this.versioned.delete(ev.sessionId)) void this.reload(ev.sessionId);
    if (ev.type === "session") this.onSessionChange(ev.sessionId, ev.data);
    if (/^(assistant\.final|error|session\.compacted)$/.test(ev.type)) st.publish("context", ev.sessionId);
    this.trackModel(ev);
    if (ev.type === "user.message" || ev.type === "assistant.final") {
      const s = st.session(ev.sessionId);
      if (s && ev.data?.text) s.lastSnippet = String(ev.data.text).slice(0, 80);
    }
  }

  // The stream to the service can be live while the model server behind it
  // is down: a turn that failed to reach it marks its agent until a reply
  // comes through again.
  private trackModel(ev: StreamEvent & { sessionId: string }): void {
    const agentId = this.store.session(ev.sessionId)?.agentId;
    if (!agentId) return;
    const down = this.store.modelDown;
    const was = down.get(agentId);
    if (ev.type === "error" && MODEL_DOWN.has(ev.data?.code)) down.set(agentId, { kind: "unreachable", message: String(ev.data?.message ?? "") });
    else if (ev.type === "error" && ev.data?.code === "upstream_malformed") down.set(agentId, { kind: "broken", message: "" });
    else if (ev.type === "assistant.delta" || (ev.type === "assistant.final" && ev.data?.kind !== "status")) down.delete(agentId);
    if (down.get(agentId)?.kind !== was?.kind) this.store.publish("conn", ev.sessionId);
  }

  // A session was renamed, cleared or deleted (here or by another client).
  private onSessionChange(id: string, d: { change: string; session?: Session }): void {
    const st = this.store;
    switch (d?.change) {
      case "deleted":
        this.forget(id);
        return;
      case "cleared":
        st.transcript(id).load([]);
        if (st.sessionId === id) st.publish("messages", {});
        break;
      case "branched":
        // Another version shown (here or in another window): read it again.
        if (st.transcripts.has(id)) void this.reload(id);
        break;
      default: {
        const s = st.session(id);
        if (s && d?.session) Object.assign(s, d.session);
      }
    }
    st.publish("sessions");
  }

  onStreamState(s: StreamState): void {
    this.store.conn.set(s.sessionId, s);
    this.store.publish("conn", s.sessionId);
  }

  onPrompts(ps: Prompt[] | null): void {
    this.store.prompts = ps ?? [];
    this.store.publish("prompts");
  }

  onDecision(d: any): void {
    this.apply(d.sessionId, this.store.transcript(d.sessionId).decide(d));
  }

  onSendError(d: { sessionId: string; code: string; message: string }): void {
    this.apply(d.sessionId, this.store.transcript(d.sessionId).apply({ id: "", type: "error", data: { code: d.code, message: d.message } }));
  }
}
