// The window's link to the Go side: the methods main binds (package app's
// App) and the events app emits. Wails injects window.go and window.runtime.
import { externalURL } from "./links";
import type { PolicyRule } from "./prompt";
import type { AgentChoices } from "./transcript";

/** One promise of the sandbox programs run in, and whether it holds here (tools.Protection). */
export interface SandboxProtection {
  name: string;
  held: boolean;
  by: string;
}

export interface Agent {
  agentId: string;
  displayName: string;
  description?: string;
  type: string;
  provider?: string;
  model?: string;
  status: { state: string; detail?: string };
  /** An A2A agent's card: its skills (GET /v1/agents). */
  a2a?: { cardUrl?: string; name?: string; skills: { id: string; name: string; description?: string; tags?: string[] }[] };
}

export interface Session {
  sessionId: string;
  agentId: string;
  name?: string;
  createdAt?: string;
  updatedAt?: string;
  lastSnippet?: string;
  /** When it was pinned; pinned conversations are listed first. */
  pinnedAt?: string;
}

export interface Transcript {
  sessionId: string;
  messages: any[];
  lastEventId: number;
  unavailable?: boolean;
  /** The session's round tables, oldest first (app.RoundtableCard). */
  roundtables?: RoundtableInfo[];
  /** The session's compactions, oldest first (session.compacted data). */
  compactions?: any[];
  /** Versions of the shown turns that have others ("< 1/2 >"). */
  versions?: { shown: string; turns: string[] }[];
}

/** A stored round table, read back for its card when a transcript loads. */
export interface RoundtableInfo {
  runId: string;
  turnId?: string;
  source: string; // api | tool | agent
  status: string; // running | completed | no_participants | ... | interrupted | failed
  outcome?: string;
  summary?: string;
  participants: string[];
  createdAt: string;
  result?: unknown;
  markdown?: string;
}

export interface Info {
  serviceUrl: string;
  version: string;
  healthy: boolean;
  error?: string;
  /** The service could not reload its config file and runs on the config it had. */
  warning?: string;
  /** The config file changed outside Jarvis and waits for the user's approval (ApproveConfig). */
  pendingConfig?: PendingConfig;
}

/** A config file content not applied until approved: what it would start, where it would connect. */
export interface PendingConfig {
  path: string;
  /** SHA-256 of the content the lines describe; Approve sends it back. */
  hash: string;
  lines: string[];
}

export interface AuditEntry {
  id: number;
  time: string;
  session_id?: string;
  tool_call_id?: string;
  tool: string;
  arguments: unknown;
  edited_arguments?: unknown;
  proposed_risk?: string;
  class: string;
  decision: string;
  decided_by: string;
  reason?: string;
  result?: string;
  error?: string;
  duration_ms: number;
  prev_hash: string;
  hash: string;
}

export interface AuditFilter {
  tool: string;
  decision: string;
  decidedBy: string;
  sessionId: string;
  since: string;
  until: string;
  limit?: number;
}

export interface VerifyReport {
  ok: boolean;
  rows: number;
  first_bad_id?: number;
  reason?: string;
  warnings?: string[];
}

export interface ProvidersInfo {
  configured: boolean;
  problem?: string;
  defaultProvider: string;
  providers: Record<string, { baseUrl?: string; model?: string; apiKeyRef?: string }>;
  openaiKeyStored: boolean;
  keyStorage?: "env" | "keyring" | "file";
  secretsFile?: string;
  /** sizes: the models' sizes in bytes where the server lists them (Ollama). */
  discovered: { name: string; baseUrl: string; models: string[]; embeddingModels?: string[]; sizes?: Record<string, number> }[];
}

/** How memory search finds notes (GET /v1/memory/embeddings). */
export interface MemoryRetrieval {
  retrieval: "hybrid" | "keyword+synonyms" | "keyword" | string;
  embeddings?: { model: string; embedded: number; total: number; paused?: boolean; error?: string };
}

export interface About {
  product: string;
  version: string;
  commit: string;
  dataDir: string;
  configPath: string;
  secretsFile: string;
  autostartSupported: boolean;
  autostart: boolean;
  autostartFile?: string;
  /** The licence (MIT), the project's page and where to report a problem. */
  license?: string;
  homepage?: string;
  issues?: string;
}

export interface SetProviderRequest {
  provider: string;
  apiKey?: string;
  baseUrl?: string;
  model?: string;
}

export interface ProxyTestReport {
  status: number;
  latencyMs: number;
  contentType?: string;
  requestBody?: string;
  rawResponse: string;
  rawTruncated?: boolean;
  parsed: boolean;
  parseError?: string;
  error?: string;
  errorKind?: string;
  output: string;
  thoughts?: string[];
  agentStatus?: string;
  chunks?: number;
  pending?: boolean;
  callbackUrl?: string;
}

/** An Inbox item (GET /v1/inbox): a task's result or failure, a call waiting for approval. */
export interface InboxItem {
  id: string;
  kind: "result" | "failure" | "approval" | "answer";
  title: string;
  body?: string;
  session_id?: string;
  task_id?: string;
  state: string;
  read: boolean;
  created_at: string;
}

/** A scheduled task as the service shows it. */
export interface Task {
  id: string;
  name: string;
  prompt: string;
  agent?: string;
  schedule: string;
  time_zone?: string;
  catch_up?: string;
  tools?: string[];
  approval_wait_minutes?: number;
  schedule_words?: string;
  policy?: string;
  next_run?: string;
  source?: string;
  disabled?: boolean;
}

/** A schedule in words and its next runs (POST /v1/tasks/preview). */
export interface TaskPreview {
  schedule_words: string;
  next_runs: string[];
}

/** A tool a task may be given, and what it lets the task do in words. */
export interface TaskTool {
  name: string;
  words: string;
}

/** A conversation the find box found: the session and its newest matching message. */
export interface SearchHit {
  session: Session;
  messageId: number;
  role: string;
  snippet: string;
}

export interface AppAPI {
  Info(): Promise<Info>;
  /** Approves the pending config content whose hash was shown; refused when the file changed since. */
  ApproveConfig(hash: string): Promise<void>;
  Agents(): Promise<Agent[]>;
  Sessions(agentId: string): Promise<Session[]>;
  /** A page of the sessions, newest first; cursor "" for the first, a page's nextCursor for the next (GET /v1/sessions). */
  SessionsPage(agentId: string, cursor: string): Promise<{ sessions: Session[]; nextCursor?: string }>;
  /** A page of the sessions whose messages contain the text, with a snippet around the match (GET /v1/sessions/search). */
  SearchSessions(q: string, cursor: string): Promise<{ results: SearchHit[]; nextCursor?: string }>;
  NewSession(agentId: string): Promise<Session>;
  AttachSession(agentId: string, sessionId: string): Promise<Session>;
  OpenSession(sessionId: string): Promise<Transcript>;
  Reload(sessionId: string): Promise<Transcript>;
  RenameSession(sessionId: string, name: string): Promise<void>;
  ClearSession(sessionId: string): Promise<void>;
  DeleteSession(sessionId: string): Promise<void>;
  Send(sessionId: string, text: string): Promise<void>;
  /** Sends text as a new version of the session's turn (Regenerate, Retry, Edit). */
  SendVersion(sessionId: string, turnId: string, text: string): Promise<void>;
  /** Shows the conversation's branch through version turnId of a turn. */
  ShowVersion(sessionId: string, turnId: string): Promise<void>;
  SendWithImages(sessionId: string, text: string, images: string[]): Promise<void>;
  Cancel(sessionId: string): Promise<boolean>;
  ResolvePrompt(promptId: string, choice: string, editedArguments: string): Promise<void>;
  /** As ResolvePrompt; scope picks the rule "always" saves among the prompt's scopes. */
  ResolvePromptScoped(promptId: string, choice: string, editedArguments: string, scope: number): Promise<void>;
  /** Answers a prompt (app.PromptAnswer): why goes with deny, chat (the conversation's title) with always. */
  AnswerPrompt(promptId: string, answer: { choice: string; edited_arguments?: string; scope?: number; why?: string; chat?: string }): Promise<void>;
  /** The gate's decision on each tool call of a session, from the audit log. */
  SessionDecisions(sessionId: string): Promise<{ toolCallId: string; proposedRisk?: string; class: string; decision: string; decidedBy: string; reason?: string; edited?: boolean }[]>;
  /** Writes a conversation the window formatted ("md" or "json") where the user chooses. */
  ExportConversation(sessionId: string, format: string, content: string): Promise<{ path?: string; bytes: number; cancelled?: boolean }>;
  /** Writes every conversation ("md" or "json"), read from the data dir, where the user chooses. */
  ExportAllConversations(format: string): Promise<{ path?: string; bytes: number; cancelled?: boolean; conversations?: number }>;
  PinSession(sessionId: string, pinned: boolean): Promise<void>;
  /** An ACP agent's modes and models in the conversation and the current ones (GET /v1/sessions/{id}/agent-choice). */
  AgentChoices(sessionId: string): Promise<AgentChoices>;
  /** Chooses the conversation's mode or model ("" leaves one as it is): kept, and sent to the agent. */
  ChooseForAgent(sessionId: string, mode: string, model: string): Promise<AgentChoices>;
  /** An ACP agent's sign-in methods, as it offered them when it asked to sign in. */
  AgentSignIn(agentId: string): Promise<{ methods: { id: string; name: string; description?: string; kind: string; vars?: string[]; command?: string; args?: string[]; label?: string }[] }>;
  /** Stores the keys of one of its key methods in the keyring (the agent signs in with them at its next start); without keys, asks the agent to sign in with its own method. */
  SignInAgent(agentId: string, methodId: string, values: Record<string, string>): Promise<void>;
  /** Runs one of its terminal logins in a terminal the user sees, waits for it to end, then signs the agent in; the answer is what to tell the user. */
  RunAgentLogin(agentId: string, methodId: string): Promise<string>;
  PermissionRules(): Promise<{
    workspace: string; rules: PolicyRule[]; default_commands?: PolicyRule[]; sandbox?: SandboxProtection[];
    grants?: { session_id: string; rule: PolicyRule }[]; tools?: { name: string; title?: string }[];
  }>;
  AddRule(next: PolicyRule): Promise<void>;
  RevokeRule(index: number, seen: PolicyRule): Promise<void>;
  EditRule(index: number, seen: PolicyRule, next: PolicyRule): Promise<void>;
  PendingPrompts(): Promise<any[]>;
  AuditList(f: AuditFilter): Promise<{ entries: AuditEntry[]; more: boolean }>;
  AuditVerify(): Promise<VerifyReport>;
  AuditExportJSONL(f: AuditFilter): Promise<{ path: string; rows: number; cancelled?: boolean }>;
  Providers(): Promise<ProvidersInfo>;
  SetProvider(req: SetProviderRequest): Promise<ProvidersInfo>;
  /** Checks a provider before saving it (POST /v1/providers/test); nothing is saved. */
  TestProvider(req: SetProviderRequest): Promise<{ ok: boolean; kind: string; message: string; baseUrl: string; models?: string[] }>;
  /** Starts Ollama for the user (app/ollama.go): installed, running now, started by this call, in words. */
  StartOllama(): Promise<{ installed: boolean; running: boolean; started: boolean; message: string }>;
  TestAgent(agentId: string, text: string): Promise<ProxyTestReport>;
  MemoryStatus(): Promise<MemoryRetrieval>;
  PauseMemoryEmbedding(paused: boolean): Promise<MemoryRetrieval>;
  /** Memory finds notes by meaning with this model of a local server; "" and "": by words only. */
  UseMemoryEmbedding(baseUrl: string, model: string): Promise<MemoryRetrieval>;
  Roundtable(runId: string): Promise<any>;
  About(): Promise<About>;
  /** The text "Copy diagnostics" copies: version, system, kernel, sandbox, service kind, model set up; never a secret. */
  Diagnostics(): Promise<string>;
  SetAutostart(on: boolean): Promise<About>;
  /** The Inbox, newest first, and its unread count (all: with the items marked done). */
  Inbox(all: boolean): Promise<{ items: InboxItem[] | null; unread: number }>;
  /** Allow ("allow") or deny ("deny") a task's call waiting for approval. */
  InboxDecide(id: string, choice: string): Promise<void>;
  InboxMark(id: string, read: boolean, done: boolean): Promise<void>;
  Tasks(): Promise<Task[]>;
  /** Creates (no id) or changes a task; answers with it as stored. */
  SaveTask(t: Partial<Task>): Promise<Task>;
  DeleteTask(id: string): Promise<void>;
  /** Runs a task at once; its outcome comes to the Inbox. */
  RunTaskNow(id: string): Promise<{ id: string; status: string }>;
  PreviewSchedule(schedule: string, timeZone: string): Promise<TaskPreview>;
  TaskTools(agentId: string): Promise<TaskTool[]>;
  RunTasksWhenClosed(): Promise<boolean>;
  SetRunTasksWhenClosed(on: boolean): Promise<void>;
}

declare global {
  interface Window {
    go?: { app?: { App?: AppAPI } };
    runtime?: {
      EventsOn(name: string, cb: (data: any) => void): () => void;
      BrowserOpenURL(url: string): void;
    };
  }
}

export function api(): AppAPI {
  const a = window.go?.app?.App;
  if (!a) throw new Error("the desktop bindings are not available");
  return a;
}

export function on(name: string, cb: (data: any) => void): void {
  window.runtime?.EventsOn(name, cb);
}

export function openExternal(url: string): void {
  const safe = externalURL(url); // links.ts
  if (safe) window.runtime?.BrowserOpenURL(safe);
}

/** Errors from bound methods arrive as strings or Error objects. */
export function errText(e: unknown): string {
  if (typeof e === "string") return e;
  if (e instanceof Error) return e.message;
  return String(e);
}
