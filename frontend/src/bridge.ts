// The window's link to the Go side: the methods main binds (package app's
// App) and the events app emits. Wails injects window.go and window.runtime.

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
}

export interface Transcript {
  sessionId: string;
  messages: any[];
  lastEventId: number;
  unavailable?: boolean;
}

export interface Info {
  serviceUrl: string;
  version: string;
  healthy: boolean;
  error?: string;
}

export interface AppAPI {
  Info(): Promise<Info>;
  Agents(): Promise<Agent[]>;
  Sessions(agentId: string): Promise<Session[]>;
  NewSession(agentId: string): Promise<Session>;
  AttachSession(agentId: string, sessionId: string): Promise<Session>;
  OpenSession(sessionId: string): Promise<Transcript>;
  Reload(sessionId: string): Promise<Transcript>;
  RenameSession(sessionId: string, name: string): Promise<void>;
  ClearSession(sessionId: string): Promise<void>;
  DeleteSession(sessionId: string): Promise<void>;
  Send(sessionId: string, text: string): Promise<void>;
  Cancel(sessionId: string): Promise<boolean>;
  ResolvePrompt(promptId: string, choice: string, editedArguments: string): Promise<void>;
  PendingPrompts(): Promise<any[]>;
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
  if (/^(https?:|mailto:)/i.test(url)) window.runtime?.BrowserOpenURL(url);
}

/** Errors from bound methods arrive as strings or Error objects. */
export function errText(e: unknown): string {
  if (typeof e === "string") return e;
  if (e instanceof Error) return e.message;
  return String(e);
}
