// The window's link to the Go side: the methods main binds (package app's
// App) and the events app emits. Wails injects window.go and window.runtime.
import { externalURL } from "./links";
import type { PolicyRule } from "./prompt";

export interface Agent {
  agentId: string;
  displayName: string;
  description?: string;
  type: string;
  provider?: string;
  model?: string;
  status: { state: string; detail?: string };
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
  discovered: { name: string; baseUrl: string; models: string[] }[];
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

export interface AppAPI {
  Info(): Promise<Info>;
  Agents(): Promise<Agent[]>;
  Sessions(agentId: string): Promise<Session[]>;
  /** Sessions whose messages contain the text, with a snippet around the match (GET /v1/sessions/search). */
  SearchSessions(q: string): Promise<{ session: Session; messageId: number; role: string; snippet: string }[]>;
  NewSession(agentId: string): Promise<Session>;
  AttachSession(agentId: string, sessionId: string): Promise<Session>;
  OpenSession(sessionId: string): Promise<Transcript>;
  Reload(sessionId: string): Promise<Transcript>;
  RenameSession(sessionId: string, name: string): Promise<void>;
  ClearSession(sessionId: string): Promise<void>;
  DeleteSession(sessionId: string): Promise<void>;
  Send(sessionId: string, text: string): Promise<void>;
  SendWithImages(sessionId: string, text: string, images: string[]): Promise<void>;
  Cancel(sessionId: string): Promise<boolean>;
  ResolvePrompt(promptId: string, choice: string, editedArguments: string): Promise<void>;
  /** As ResolvePrompt; scope picks the rule "always" saves among the prompt's scopes. */
  ResolvePromptScoped(promptId: string, choice: string, editedArguments: string, scope: number): Promise<void>;
  /** The gate's decision on each tool call of a session, from the audit log. */
  SessionDecisions(sessionId: string): Promise<{ toolCallId: string; proposedRisk?: string; class: string; decision: string; decidedBy: string; reason?: string; edited?: boolean }[]>;
  /** Writes a conversation the window formatted ("md" or "json") where the user chooses. */
  ExportConversation(sessionId: string, format: string, content: string): Promise<{ path?: string; bytes: number; cancelled?: boolean }>;
  /** Writes every conversation ("md" or "json"), read from the data dir, where the user chooses. */
  ExportAllConversations(format: string): Promise<{ path?: string; bytes: number; cancelled?: boolean; conversations?: number }>;
  PinSession(sessionId: string, pinned: boolean): Promise<void>;
  PermissionRules(): Promise<{ workspace: string; rules: PolicyRule[] }>;
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
  TestAgent(agentId: string, text: string): Promise<ProxyTestReport>;
  Roundtable(runId: string): Promise<any>;
  About(): Promise<About>;
  SetAutostart(on: boolean): Promise<About>;
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
