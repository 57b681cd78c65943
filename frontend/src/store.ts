// The window's state in one typed store: agents, sessions, the open session,
// each session's transcript (transcript.ts) and stream state, and the queue
// of permission prompts. Views subscribe to the topics they show and never
// keep a second copy; actions.ts is the only writer. No DOM here, so the
// store and the actions are unit-tested against a fake bridge.
import type { Agent, PendingConfig, SandboxProtection, Session } from "./bridge";
import type { PolicyRule, Prompt } from "./prompt";
import { Transcript, type Effect } from "./transcript";

/** The state of one session's event stream, as app reports it. */
export interface StreamState {
  sessionId: string;
  state: string;
  attempt: number;
  retryInMs?: number;
  error?: string;
}

/** What the store tells its subscribers, per topic. */
export interface Topics {
  /** The agent list or the selected agent changed. */
  agents: void;
  /** The session list, a session's name or the open session changed. */
  sessions: void;
  /** A session's stream state changed (its id). */
  conn: string;
  /** The prompt queue changed. */
  prompts: void;
  /** Items of a session's transcript changed or went (applied in place). */
  effect: { sessionId: string; eff: Effect };
  /** The open session's transcript must be shown whole again; loading: it is being fetched. */
  messages: { loading?: boolean };
  /** A session was opened (the composer takes the focus). */
  opened: string;
  /** A session's context use may have changed (its id). */
  context: string;
  /** A short notice for the user; good: a success. */
  notice: { text: string; good: boolean; undo?: () => void };
  /** The setup form: open with a message, or "" to close unless the user opened it. */
  setup: { message: string };
  /** The policy rules or the workspace changed. */
  rules: void;
  /** Open the Test dialog of a proxy agent. */
  agentTest: Agent;
  /** The config file changed outside Jarvis: ask the user to approve it. */
  configApproval: PendingConfig;
}

type Listener<K extends keyof Topics> = (v: Topics[K]) => void;

export class Store {
  agents: Agent[] = [];
  sessions: Session[] = [];
  /** Where the next page of the session list starts ("" once all are loaded). */
  sessionsCursor = "";
  /** A page of the session list is being loaded. */
  sessionsLoading = false;
  agentId = "";
  sessionId = "";
  transcripts = new Map<string, Transcript>();
  conn = new Map<string, StreamState>();
  prompts: Prompt[] = [];
  /** The folder the file tools are confined to (for full paths in prompts). */
  workspace = "";
  /** The gate's policy rules (the Permissions page). */
  rules: PolicyRule[] = [];
  /** The read-only commands that run with no prompt (the Permissions page). */
  defaultCommands: PolicyRule[] = [];
  /** The sandbox's protections on this system (the Permissions page). */
  sandbox: SandboxProtection[] = [];
  /** The "allow for this session" grants of the conversations open since the window started. */
  grants: { session_id: string; rule: PolicyRule }[] = [];
  /** The tools a rule can name (the Permissions page's Add rule). */
  knownTools: { name: string; title?: string }[] = [];
  /** Agents whose model server failed their last turn: "unreachable" or "broken" (its stream broke off); cleared by the next reply. */
  modelDown = new Map<string, { kind: "unreachable" | "broken"; message: string }>();
  /** Replies are read aloud. */
  speak = false;
  /** The external agent whose "Attach" form is open. */
  attachFor = "";
  /** The session being renamed in the sidebar. */
  renaming = "";

  private listeners = new Map<keyof Topics, Set<(v: any) => void>>();

  /** Calls fn on every publish of topic; returns the unsubscribe function. */
  subscribe<K extends keyof Topics>(topic: K, fn: Listener<K>): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  publish<K extends keyof Topics>(topic: K, ...v: Topics[K] extends void ? [] : [Topics[K]]): void {
    for (const fn of Array.from(this.listeners.get(topic) ?? [])) {
      try {
        fn(v[0] as Topics[K]);
      } catch (ex) {
        // One view's failure must not stop the others from updating.
        console.error(topic, ex);
      }
    }
  }

  /** A session's transcript, created empty on first use. */
  transcript(id: string): Transcript {
    let t = this.transcripts.get(id);
    if (!t) {
      t = new Transcript();
      this.transcripts.set(id, t);
    }
    return t;
  }

  agent(id: string): Agent | undefined {
    return this.agents.find((a) => a.agentId === id);
  }

  session(id: string): Session | undefined {
    return this.sessions.find((s) => s.sessionId === id);
  }

  current(): Session | undefined {
    return this.session(this.sessionId);
  }

  /** The agent a new conversation goes to. */
  defaultAgent(): string {
    return this.agentId || this.agents[0]?.agentId || "general";
  }
}
