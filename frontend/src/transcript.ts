// The transcript model of one session: a list of items built from the
// loaded history and then from stream events, applied once each, in order.
// Pure logic (no DOM) so it is unit-tested; the view renders items by id.
import type { RoundtableInfo } from "./bridge";
import { compactedLine } from "./context";
import type { ReplyUsage } from "./usage";

// "stopped": the user pressed Stop; a state of the turn, not an error.
export type ItemKind = "user" | "assistant" | "status" | "error" | "stopped" | "tool" | "thought" | "roundtable" | "plan" | "diff";

export interface Item {
  key: string; // stable id for the view
  kind: ItemKind;
  text: string;
  turnId?: string;
  final?: boolean;
  transient?: boolean; // a status line the next reply or error replaces
  tool?: ToolCard;
  rt?: RoundTable;
  plan?: PlanStep[]; // a coding agent's plan: the latest of its turn
  diff?: AgentDiff; // a file change an ACP agent reported (a status of kind "diff")
  usage?: ReplyUsage; // what the model server counted for the turn (usage.ts)
  images?: number; // images attached to a user message (attach.ts)
  code?: string; // an error's code (errors.ts puts it in plain words)
  /** A user message's versions ("< 1/2 >": Regenerate, Retry, Edit made them): the turns, oldest first, and the one shown. */
  versions?: { turns: string[]; shown: number };
}

/** The versions of one place of a conversation (GET /v1/sessions/{id}/messages). */
export interface TurnVersions {
  shown: string;
  turns: string[];
}

/** A file change an ACP agent's tool call reported (a status of kind "diff"). */
export interface AgentDiff {
  tool_call_id?: string;
  title?: string;
  path: string;
  /** The text before; absent for a new file (or when omitted). */
  old?: string;
  new: string;
  /** Too long to show: the path alone. */
  omitted?: boolean;
  /** "turn": Jarvis wrote it and the turn's undo restores it; "none": the agent wrote it itself. */
  undo: string;
}

/** The modes and models an ACP agent offers in a session (a status of kind "agent_choices"). */
export interface AgentChoices {
  modes?: { id: string; name: string; description?: string }[];
  mode?: string;
  models?: { id: string; name: string; description?: string }[];
  model?: string;
}

/** One step of a coding agent's plan (a status of kind "plan"). */
export interface PlanStep {
  content: string;
  status: string; // pending | in_progress | completed
  priority?: string;
}

/** The steps of a plan status: its `plan` field, else its text's "[x] step" lines. */
export function planSteps(d: { text?: string; plan?: PlanStep[] }): PlanStep[] {
  if (Array.isArray(d.plan)) return d.plan.map((p) => ({ content: String(p.content ?? ""), status: String(p.status ?? "pending"), priority: p.priority }));
  const marks: Record<string, string> = { x: "completed", "~": "in_progress", " ": "pending" };
  const steps: PlanStep[] = [];
  for (const line of String(d.text ?? "").split("\n")) {
    const m = /^\[([x~ ])\] (.*)$/.exec(line);
    if (m) steps.push({ content: m[2], status: marks[m[1]] });
  }
  return steps;
}

/** A round table's live progress and, once it ends, its result. */
export interface RoundTable {
  runId: string;
  participants: string[];
  phase: string;
  waitingFor: string[];
  /** Agents that answered, per phase. */
  responded: Record<string, string[]>;
  failures: { phase: string; agent: string; message: string }[];
  log: { type: string; phase: string; agent: string; message: string }[];
  done: boolean;
  status?: string;
  outcome?: string;
  summary?: string;
  markdown?: string;
  result?: any;
}

export interface ToolCard {
  id: string;
  name: string;
  arguments: unknown;
  risk?: string;
  reason?: string;
  class?: string;
  decision?: string; // allowed | denied | withdrawn (the service gave up on the call; nothing ran)
  decidedBy?: string;
  edited?: boolean;
  ok?: boolean;
  result?: string;
  error?: string;
  pending: boolean;
  /** The untrusted content the conversation had read when the call was asked for, in words. */
  untrusted?: string[];
  /** "service": run by the service itself (memory, delegation, round table), never prompted.
   *  "agent": run by a coding-agent CLI inside its own program, outside the gate (reported afterwards). */
  source?: string;
  /** Secret values were removed from the result before it was stored or sent to the model. */
  redacted?: boolean;
  /** Images and audio the tool returned (an MCP tool's), shown on the card. */
  media?: ToolMedia[];
}

/** One slash command of an ACP agent (api.AgentCommand). */
export interface AgentCommand {
  name: string;
  description?: string;
  hint?: string;
}

/** One image or audio clip of a tool's result (api.Media). */
export interface ToolMedia {
  type: string; // "image" | "audio"
  mimeType: string;
  data: string; // base64
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
  choices?: AgentChoices; // an ACP agent's modes and models changed (agentchoice.ts)
}

export class Transcript {
  items: Item[] = [];
  running = false;
  /** The slash commands the session's ACP agent offers (agent.commands), for the composer's "/" menu. */
  commands: AgentCommand[] = [];
  private n = 0;
  private byKey = new Map<string, Item>();
  // Deltas of a round-table turn that repeat its result's Markdown (the
  // result card shows it), per turn.
  private rtEcho = new Map<string, string>();
  // How many items are status lines (transient) and round tables: a delta
  // looks through the items for them only when there are some, as a session
  // can hold thousands of items and the window's JavaScript runs without a
  // JIT (internal/webkit/lean_linux.go).
  private transients = 0;
  private roundTables = 0;

  private add(it: Item, eff: Effect): Item {
    this.items.push(it);
    this.byKey.set(it.key, it);
    if (it.transient) this.transients++;
    if (it.rt) this.roundTables++;
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
    if (this.transients === 0) return;
    this.transients = 0;
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

  /**
   * The text of the turn's replies already shown and finished above tool
   * cards (the parts before each tool call), oldest first, concatenated as
   * the service concatenates the turn's deltas; open is the reply still
   * streaming, which is not one of them.
   */
  private earlierParts(open: Item | undefined, turnId: string | undefined): string {
    let text = "";
    for (let i = this.items.length - 1; i >= 0; i--) {
      const it = this.items[i];
      if (it.kind === "user") break;
      if (it !== open && it.kind === "assistant" && it.final && (!turnId || it.turnId === turnId)) text = it.text + text;
    }
    return text;
  }

  /** The text of the last user message before the item with key (or at the end), "" if none. */
  lastUserText(key?: string): string {
    let end = key ? this.items.findIndex((it) => it.key === key) : this.items.length;
    if (end < 0) end = this.items.length;
    for (let i = end - 1; i >= 0; i--) if (this.items[i].kind === "user") return this.items[i].text;
    return "";
  }

  /** The turn an item belongs to and its user message's text ("" when unknown). */
  turnOf(key: string): { turnId: string; text: string } {
    const it = this.byKey.get(key);
    const turnId = it?.turnId ?? "";
    if (!turnId) return { turnId: "", text: "" };
    const user = this.items.find((x) => x.kind === "user" && x.turnId === turnId);
    return { turnId, text: user?.text ?? "" };
  }

  /**
   * A new version of a turn is on its way (Regenerate, Retry, Edit): the
   * turn and everything after it leave the view (the service keeps them as
   * the other version), and the message shows as the user's, once.
   */
  replaceTurn(turnId: string, text: string): Effect {
    const eff: Effect = { changed: [], removed: [] };
    const at = this.items.findIndex((it) => it.turnId === turnId);
    if (at >= 0) {
      for (const it of this.items.slice(at)) {
        this.byKey.delete(it.key);
        eff.removed.push(it.key);
        if (it.transient) this.transients--;
        if (it.rt) this.roundTables--;
      }
      this.items = this.items.slice(0, at);
    }
    const local = this.localUser(text);
    eff.changed.push(...local.changed);
    return eff;
  }

  /** The user's own message, shown before the service echoes it. */
  localUser(text: string, images = 0): Effect {
    const eff: Effect = { changed: [], removed: [] };
    this.add({ key: this.newKey("local"), kind: "user", text, transient: false, images: images || undefined }, eff).final = false;
    this.running = true;
    return eff;
  }

  /**
   * Loads history (GET /v1/sessions/{id}/messages) and lays the session's
   * round tables out where the stream showed them live: a round-table
   * agent's card in place of its reply (the message names the run in
   * meta.roundtable_run_id), a round_table tool's card before the call's
   * card, any other run after its turn or, without one, by time. A reply
   * whose run is not in roundtables stays a Markdown reply.
   */
  load(messages: any[], roundtables: RoundtableInfo[] = [], compactions: any[] = [], versions: TurnVersions[] = []): void {
    this.items = [];
    this.transients = this.roundTables = 0;
    this.byKey.clear();
    this.rtEcho.clear();
    this.running = false;
    const eff: Effect = { changed: [], removed: [] };
    const cards = new Map<string, Item>();
    const runs = new Map(roundtables.filter((r) => r?.runId).map((r) => [r.runId, r]));
    const placed = new Set<string>();
    const addRun = (r: RoundtableInfo, at: any) => {
      if (placed.has(r.runId)) return;
      placed.add(r.runId);
      this.add({ key: `rt-${r.runId}`, kind: "roundtable", text: "", turnId: r.turnId || at?.turnId, rt: storedRoundTable(r) }, eff);
    };
    // A round_table call's run: the one of its turn whose Markdown is the
    // call's result, else the turn's next one.
    const toolText = new Map<string, string>();
    for (const m of messages) if (m.role === "tool" && m.toolCallId) toolText.set(m.toolCallId, m.text ?? "");
    const callRun = new Map<string, RoundtableInfo>();
    const named = new Set<string>();
    for (const m of messages) {
      const id = runIdOf(m);
      if (id && runs.has(id)) named.add(id);
    }
    for (const byText of [true, false]) {
      for (const m of messages) {
        if (!m.turnId || !hasRoundTableCall(m)) continue;
        for (const c of m.toolCalls) {
          const id = c.id ?? c.toolCallId ?? "";
          if ((c.function ?? c).name !== "round_table" || callRun.has(id)) continue;
          const text = toolText.get(id);
          const r = roundtables.find((r) => r?.runId && r.source === "tool" && r.turnId === m.turnId && !named.has(r.runId) && (!byText || (text !== undefined && r.markdown === text)));
          if (r) {
            callRun.set(id, r);
            named.add(r.runId);
          }
        }
      }
    }
    // Runs no message names (one still going, one that failed, one started
    // through the API) go after their turn's message (where the stream
    // showed them), or before the first message written after them.
    const anchored = new Map<number, RoundtableInfo[]>();
    for (const r of roundtables) {
      if (!r?.runId || named.has(r.runId)) continue;
      let at = -1;
      if (r.turnId) {
        let last = -1;
        let lastUser = -1;
        messages.forEach((m, i) => {
          if (m.turnId !== r.turnId) return;
          last = i + 1;
          if (m.role === "user") lastUser = i + 1;
        });
        at = lastUser >= 0 ? lastUser : last;
      }
      if (at < 0) {
        const t = Date.parse(r.createdAt);
        at = messages.findIndex((m) => Date.parse(m.createdAt) > t);
        if (at < 0) at = messages.length;
      }
      if (!anchored.has(at)) anchored.set(at, []);
      anchored.get(at)!.push(r);
    }
    // A compaction's line goes after the last message it summarized.
    const pending = [...compactions].sort((a, b) => a.upto_message_id - b.upto_message_id);
    const placeCompactions = (before: number) => {
      while (pending.length && pending[0].upto_message_id < before) {
        const c = pending.shift();
        this.add({ key: `cmp-s${c.summary_id}`, kind: "status", text: compactedLine(c) }, eff);
      }
    };
    const versionsOf = new Map<string, TurnVersions>();
    for (const v of versions ?? []) if (v?.shown && Array.isArray(v.turns)) versionsOf.set(v.shown, v);
    messages.forEach((m, i) => {
      if (typeof m.id === "number") placeCompactions(m.id);
      for (const r of anchored.get(i) ?? []) addRun(r, m);
      const key = `m-${m.id ?? this.newKey("h")}`;
      switch (m.role) {
        case "user": {
          const v = versionsOf.get(m.turnId);
          this.add({ key, kind: "user", text: m.text ?? "", turnId: m.turnId, images: Array.isArray(m.meta?.images) ? m.meta.images.length : undefined, versions: v ? { turns: v.turns, shown: v.turns.indexOf(v.shown) } : undefined }, eff);
          break;
        }
        case "assistant": {
          const run = runs.get(runIdOf(m));
          if (run) addRun(run, m); // the card shows the reply's Markdown
          else if (m.text) this.add({ key, kind: "assistant", text: m.text, turnId: m.turnId, final: true }, eff);
          const calls = Array.isArray(m.toolCalls) ? m.toolCalls : [];
          for (const c of calls) {
            const id = c.id ?? c.toolCallId ?? "";
            const fn = c.function ?? c;
            const r = callRun.get(id);
            if (r) addRun(r, m); // before the call's card, as the stream showed it
            const card: ToolCard = { id, name: fn.name ?? "tool", arguments: parseArgs(fn.arguments), risk: c.risk, pending: false };
            cards.set(id, this.add({ key: `tool-${id}`, kind: "tool", text: "", turnId: m.turnId, tool: card }, eff));
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
            const media = storedMedia(meta);
            if (media.length) it.tool.media = media;
          }
          break;
        }
        case "status": {
          const kind = m.meta?.kind ?? "";
          const isErr = /fail|error/i.test(kind) || m.meta?.error;
          // How a turn that did not answer ended (stored with it): "Stopped." or its error.
          if (kind === "stopped") this.add({ key, kind: "stopped", text: "Stopped.", turnId: m.turnId }, eff);
          else if (kind === "error" && m.meta?.code === "run_waiting") this.add({ key, kind: "status", text: m.text ?? "", turnId: m.turnId }, eff);
          else if (kind === "error") this.add({ key, kind: "error", text: m.text ?? "", turnId: m.turnId, code: m.meta?.code }, eff);
          else if (kind === "plan") this.add({ key, kind: "plan", text: m.text ?? "", turnId: m.turnId, plan: planSteps({ text: m.text, plan: m.meta?.plan }) }, eff);
          // An ACP agent's file change, kept with its turn: the card as the stream showed it.
          else if (kind === "diff" && typeof m.meta?.diff?.path === "string") this.add({ key, kind: "diff", text: m.text ?? "", turnId: m.turnId, diff: m.meta.diff }, eff);
          // A change of an ACP agent's mode or model (the user's or the agent's own), or a
          // task's run going on once its waiting call was allowed: a line.
          else if (kind === "agent_choice" || kind === "resumed") this.add({ key, kind: "status", text: m.text ?? "", turnId: m.turnId || undefined }, eff);
          else this.add({ key, kind: kind === "thought" ? "thought" : isErr ? "error" : "status", text: m.text ?? "" }, eff);
          break;
        }
      }
    });
    for (const r of anchored.get(messages.length) ?? []) addRun(r, undefined);
    placeCompactions(Infinity);
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
          eff.changed.push(local.key); // its actions need the turn (Edit)
        } else {
          this.add({ key: `e-${ev.id || this.newKey("u")}`, kind: "user", text: d.text ?? "", turnId: d.turn_id, final: true }, eff);
        }
        this.running = true;
        break;
      }
      case "assistant.delta": {
        const rtItem = d.turn_id && this.roundTables > 0 ? this.items.find((it) => it.rt?.done && it.turnId === d.turn_id) : undefined;
        let text = d.text ?? "";
        if (rtItem && !this.lastAssistant(d.turn_id)) {
          const acc = (this.rtEcho.get(d.turn_id) ?? "") + text;
          if (rtItem.rt!.markdown?.startsWith(acc)) {
            this.rtEcho.set(d.turn_id, acc);
            break;
          }
          this.rtEcho.delete(d.turn_id);
          text = acc;
        }
        this.removeTransient(eff);
        let it = this.lastAssistant(d.turn_id);
        if (!it) it = this.add({ key: `a-${ev.id || this.newKey("a")}`, kind: "assistant", text: "", turnId: d.turn_id }, eff);
        else eff.changed.push(it.key);
        it.text += text;
        break;
      }
      case "assistant.final": {
        if (d.kind === "status") {
          // An external agent's forward ends its turn with a status line
          // ("Sent to external agent"), not a reply: the line stays until
          // the agent's reply arrives.
          const open = this.lastAssistant(d.turn_id);
          if (open) {
            open.final = true;
            eff.changed.push(open.key);
          }
          const shown = this.items.some((it) => it.transient && it.text === d.text);
          if (!shown && d.text) this.add({ key: `st-${ev.id || this.newKey("s")}`, kind: "status", text: d.text, turnId: d.turn_id, transient: true }, eff);
          this.running = false;
          break;
        }
        this.removeTransient(eff);
        // A round table agent's reply is its result's Markdown: the result
        // card already shows it.
        const rt = this.items.find((it) => it.rt?.done && it.rt.markdown === d.text && (!d.turn_id || it.turnId === d.turn_id));
        if (rt) {
          const open = this.lastAssistant(d.turn_id);
          if (open && rt.rt!.markdown!.startsWith(open.text)) {
            this.items = this.items.filter((x) => x !== open);
            this.byKey.delete(open.key);
            eff.removed.push(open.key);
          } else if (open) {
            open.final = true;
            eff.changed.push(open.key);
          }
          if (d.turn_id) this.rtEcho.delete(d.turn_id);
          this.running = false;
          break;
        }
        let it = this.lastAssistant(d.turn_id);
        const shown = this.earlierParts(it, d.turn_id);
        if (!it) it = this.add({ key: `a-${ev.id || this.newKey("a")}`, kind: "assistant", text: "", turnId: d.turn_id }, eff);
        else eff.changed.push(it.key);
        it.text = finalPart(d.text ?? it.text, shown, it.text);
        it.final = true;
        if (d.usage) it.usage = d.usage;
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
        if (Array.isArray(d.untrusted) && d.untrusted.length) card.untrusted = d.untrusted.map((s: { label?: string; kind?: string }) => s.label ?? s.kind ?? "untrusted content");
        if (existing) {
          existing.tool = { ...card, ...existing.tool, pending: existing.tool?.pending ?? true };
          eff.changed.push(key);
        } else this.add({ key, kind: "tool", text: "", turnId: d.turn_id, tool: card }, eff);
        break;
      }
      case "tool.result": {
        const it = this.toolItem(d.id, eff, d.name ?? "tool");
        const t = it.tool!;
        if (d.source === "service" || d.source === "agent") {
          // Run by the service itself, or inside an agent's own program: no tool.request, no prompt.
          const prev = this.lastAssistant(d.turn_id);
          if (prev && prev.key !== it.key) {
            prev.final = true;
            eff.changed.push(prev.key);
          }
          t.source = d.source;
          if (d.name) t.name = d.name;
          if (d.arguments !== undefined) t.arguments = parseArgs(d.arguments);
          if (!it.turnId) it.turnId = d.turn_id;
        }
        t.ok = !!d.ok;
        if (d.redacted) t.redacted = true;
        if (Array.isArray(d.media) && d.media.length) t.media = d.media;
        t.result = d.result ?? "";
        t.error = d.error ?? undefined;
        t.pending = false;
        if (!t.decision && d.source !== "service" && d.source !== "agent") t.decision = d.ok ? "allowed" : "denied";
        eff.changed.push(it.key);
        break;
      }
      case "roundtable.progress":
      case "roundtable.result": {
        if (!d.run_id) break;
        const key = `rt-${d.run_id}`;
        let it = this.byKey.get(key);
        if (!it) {
          const prev = this.lastAssistant(d.turn_id);
          if (prev) {
            prev.final = true;
            eff.changed.push(prev.key);
          }
          const rt: RoundTable = { runId: d.run_id, participants: [], phase: "", waitingFor: [], responded: {}, failures: [], log: [], done: false };
          it = this.add({ key, kind: "roundtable", text: "", turnId: d.turn_id, rt }, eff);
        } else eff.changed.push(key);
        if (ev.type === "roundtable.progress") applyProgress(it.rt!, d);
        else applyResult(it.rt!, d);
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
        const stopped = d.code === "cancelled";
        if (d.code === "run_waiting") {
          // A task's run stopped with Jarvis while its call waits in the Inbox: a line, nothing to retry.
          this.add({ key: `err-${ev.id || this.newKey("e")}`, kind: "status", text: msg, turnId: d.turn_id }, eff);
        } else this.add({ key: `err-${ev.id || this.newKey("e")}`, kind: stopped ? "stopped" : "error", text: stopped ? "Stopped." : msg, turnId: d.turn_id, code: d.code }, eff);
        if (d.code === "not_configured" || d.code === "provider_not_configured") eff.notConfigured = msg;
        this.running = false;
        break;
      }
      case "agent.commands":
        this.commands = Array.isArray(d.commands) ? d.commands.filter((c: any) => c && typeof c.name === "string") : [];
        break;
      case "status": {
        const kind = String(d.kind ?? "");
        if (kind === "plan") {
          // A coding agent's plan, whole each time: one checklist per turn, updated in place.
          const key = `plan-${d.turn_id || ev.id || this.newKey("p")}`;
          const it = this.get(key);
          if (it) {
            it.plan = planSteps(d);
            it.text = d.text ?? "";
            eff.changed.push(key);
          } else this.add({ key, kind: "plan", text: d.text ?? "", turnId: d.turn_id, plan: planSteps(d) }, eff);
        } else if (kind === "diff" && d.diff && typeof d.diff.path === "string") {
          // A file change an ACP agent reported: a diff card.
          this.add({ key: `diff-${ev.id || this.newKey("d")}`, kind: "diff", text: d.text ?? "", turnId: d.turn_id, diff: d.diff }, eff);
        } else if (kind === "agent_choice" || kind === "resumed") {
          // A change of the agent's mode or model, or a task's run going on
          // after its call was allowed: a line that stays (it is kept with the conversation).
          this.add({ key: `st-${ev.id || this.newKey("s")}`, kind: "status", text: d.text ?? "", turnId: d.turn_id || undefined }, eff);
        } else if (kind === "agent_choices") {
          // The agent's modes and models: the picker shows them, not the transcript.
          if (d.choices) eff.choices = d.choices;
        } else if (kind === "thought") {
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
      case "session.compacted":
        // Older messages were summarized for the model; the transcript keeps them.
        this.add({ key: `cmp-${ev.id || this.newKey("c")}`, kind: "status", text: compactedLine(d), turnId: d.turn_id }, eff);
        break;
      case "stream.reset":
        eff.reload = true;
        break;
    }
    return eff;
  }

  /** Records the desktop gate's decision on a call (tool:decision). */
  decide(d: { callId: string; tool: string; arguments: unknown; edited?: boolean; class: string; decision: string; decidedBy: string; reason?: string; ok: boolean; result?: string; error?: string; redacted?: boolean; media?: ToolMedia[] }): Effect {
    const eff: Effect = { changed: [], removed: [] };
    const it = this.toolItem(d.callId, eff, d.tool);
    const t = it.tool!;
    if (d.redacted) t.redacted = true;
    Object.assign(t, { class: d.class, decision: d.decision, decidedBy: d.decidedBy, edited: d.edited, ok: d.ok, pending: false });
    if (d.edited) t.arguments = d.arguments;
    if (d.result !== undefined) t.result = d.result;
    if (d.media?.length) t.media = d.media;
    if (d.error) t.error = d.error;
    if (d.reason && !t.reason) t.reason = d.reason;
    eff.changed.push(it.key);
    return eff;
  }

  /**
   * Puts the gate's recorded decisions (app.SessionDecisions, from the
   * audit log) on the loaded tool cards: the stored history has the calls
   * and results but not how the desktop decided.
   */
  restoreDecisions(rows: { toolCallId: string; proposedRisk?: string; class: string; decision: string; decidedBy: string; reason?: string; edited?: boolean }[]): Effect {
    const eff: Effect = { changed: [], removed: [] };
    for (const r of rows) {
      const it = this.byKey.get(`tool-${r.toolCallId}`);
      if (!it?.tool || it.tool.source === "service") continue;
      Object.assign(it.tool, { class: r.class, decision: r.decision, decidedBy: r.decidedBy, edited: r.edited || it.tool.edited });
      if (!it.tool.risk && r.proposedRisk) it.tool.risk = r.proposedRisk;
      if (r.reason && !it.tool.reason) it.tool.reason = r.reason;
      // The audit row's reason names the untrusted content of the call's turn, and what
      // followed from it (app/gate/taint.go): the card's badge shows it after a restart.
      const after = r.reason?.split("; after untrusted content from ")[1];
      if (after && !it.tool.untrusted) it.tool.untrusted = [after];
      eff.changed.push(it.key);
    }
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

/** The run a stored reply is the result of (a round-table agent's turn). */
function runIdOf(m: any): string {
  let meta = m?.meta;
  if (typeof meta === "string") {
    try {
      meta = JSON.parse(meta);
    } catch {
      meta = undefined;
    }
  }
  return m?.role === "assistant" && meta && typeof meta.roundtable_run_id === "string" ? meta.roundtable_run_id : "";
}

function hasRoundTableCall(m: any): boolean {
  return m?.role === "assistant" && Array.isArray(m.toolCalls) && m.toolCalls.some((c: any) => (c?.function ?? c)?.name === "round_table");
}

/** A card's state from a stored run: the result when it ended, else waiting for the stream's progress. */
/**
 * The last part of a turn's reply: the service's final text is the whole
 * turn's text, whose start (shown) is already on screen above the tool
 * cards. When the final does not start with it (rewritten, e.g. redacted),
 * the streamed text stands, or the final whole when nothing streamed.
 */
function finalPart(final: string, shown: string, streamed: string): string {
  if (!shown) return final;
  if (final.startsWith(shown)) return final.slice(shown.length).replace(/^\s+/, "");
  return streamed || final;
}

export function storedRoundTable(r: RoundtableInfo): RoundTable {
  const rt: RoundTable = { runId: r.runId, participants: (r.participants ?? []).map(String), phase: "", waitingFor: [], responded: {}, failures: [], log: [], done: false };
  if (r.status && r.status !== "running") applyResult(rt, { status: r.status, outcome: r.outcome, summary: r.summary, markdown: r.markdown, result: r.result });
  return rt;
}

function applyProgress(rt: RoundTable, d: any): void {
  const phase = String(d.phase ?? "");
  const agent = String(d.agent ?? "");
  const type = String(d.type ?? "");
  if (rt.log.length < 200) rt.log.push({ type, phase, agent, message: String(d.message ?? "") });
  if (Array.isArray(d.participants)) rt.participants = d.participants.map(String);
  switch (type) {
    case "phase_started":
      rt.phase = phase;
      rt.waitingFor = Array.isArray(d.waiting_for) ? d.waiting_for.map(String) : [];
      break;
    case "waiting":
      if (phase) rt.phase = phase;
      rt.waitingFor = Array.isArray(d.waiting_for) ? d.waiting_for.map(String) : rt.waitingFor;
      break;
    case "agent_responded":
    case "vote": {
      const p = phase || rt.phase;
      const list = (rt.responded[p] ??= []);
      if (agent && !list.includes(agent)) list.push(agent);
      rt.waitingFor = rt.waitingFor.filter((x) => x !== agent);
      break;
    }
    case "agent_failed":
      rt.failures.push({ phase: phase || rt.phase, agent, message: String(d.message ?? "") });
      rt.waitingFor = rt.waitingFor.filter((x) => x !== agent);
      break;
    case "synthesis":
      rt.phase = phase || "synthesis";
      break;
    case "phase_finished":
      rt.waitingFor = [];
      break;
  }
}

function applyResult(rt: RoundTable, d: any): void {
  rt.done = true;
  rt.waitingFor = [];
  rt.status = d.status;
  rt.outcome = d.outcome;
  rt.summary = d.summary;
  rt.markdown = d.markdown;
  let r = d.result;
  if (typeof r === "string") {
    try {
      r = JSON.parse(r);
    } catch {
      r = undefined;
    }
  }
  rt.result = r && typeof r === "object" ? r : undefined;
  if (rt.result?.participants?.length && !rt.participants.length) rt.participants = rt.result.participants.map(String);
}

function parseArgs(a: unknown): unknown {
  if (typeof a !== "string") return a ?? {};
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}

/**
 * The images and audio stored with a tool's message (its meta's "images" and
 * "audio": data URLs), as the card's media: what the tool returned, shown
 * again when the conversation is reopened. Anything not a base64 data URL is
 * left out (the card then checks the type, as for live results).
 */
export function storedMedia(meta: any): ToolMedia[] {
  const out: ToolMedia[] = [];
  for (const [key, type] of [["images", "image"], ["audio", "audio"]] as const) {
    const list = meta?.[key];
    if (!Array.isArray(list)) continue;
    for (const u of list) {
      const m = typeof u === "string" ? /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,(.*)$/i.exec(u) : null;
      if (m) out.push({ type, mimeType: m[1].toLowerCase(), data: m[2] });
    }
  }
  return out;
}
