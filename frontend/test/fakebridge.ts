// A fake of the Wails bridge (the bound App object and the runtime's
// events): the window's boundary, kept in memory so the store, the actions
// and the views run against it in Vitest. It records every call.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Agent, AppAPI, Session } from "../src/bridge";
import type { PolicyRule } from "../src/prompt";
import type { AgentChoices } from "../src/transcript";

export interface FakeBridge {
  api: AppAPI;
  calls: { method: string; args: unknown[] }[];
  sessions: Session[];
  messages: Map<string, any[]>;
  agents: Agent[];
  rules: PolicyRule[];
  /** The gate's "allow for this session" grants. */
  grants: { session_id: string; rule: PolicyRule }[];
  decisions: Map<string, any[]>;
  /** A config file changed outside Jarvis, waiting for approval (Info, ApproveConfig). */
  pendingConfig?: { path: string; hash: string; lines: string[] };
  /** Per session, the versions of its shown turns (as GET /v1/sessions/{id}/messages lists them). */
  versions: Map<string, { shown: string; turns: string[] }[]>;
  /** Per session, an ACP agent's modes and models (AgentChoices, ChooseForAgent check choices against them). */
  choices: Map<string, AgentChoices>;
  /** Sends an event as app would (stream:event, tool:prompts, ...). */
  emit(name: string, data: unknown): void;
  /** Makes the next call of method fail with message. */
  failNext(method: string, message: string): void;
  /** What StartOllama answers (app/ollama.go); not installed when unset. */
  startOllama?: () => unknown;
  /** Page sizes of SessionsPage and SearchSessions (the service's limits as the app asks them). */
  pageSize: number;
  searchPageSize: number;
  /** Holds the next call of method until the returned function is called. */
  holdNext(method: string): () => void;
}

export function fakeBridge(): FakeBridge {
  const handlers = new Map<string, ((d: any) => void)[]>();
  const fails = new Map<string, string>();
  const holds = new Map<string, Promise<void>>();
  let n = 0;
  const fb: FakeBridge = {
    calls: [],
    sessions: [],
    messages: new Map(),
    agents: [{ agentId: "general", displayName: "General Assistant", type: "chat", status: { state: "ok" } }],
    rules: [],
    grants: [],
    decisions: new Map(),
    versions: new Map(),
    choices: new Map(),
    emit(name, data) {
      for (const f of handlers.get(name) ?? []) f(data);
    },
    failNext(method, message) {
      fails.set(method, message);
    },
    pageSize: 100,
    searchPageSize: 50,
    holdNext(method) {
      let release = () => {};
      holds.set(method, new Promise<void>((r) => (release = r)));
      return () => release();
    },
    api: undefined as unknown as AppAPI,
  };
  const impl: Partial<Record<keyof AppAPI, (...a: any[]) => unknown>> = {
    StartOllama: () => (fb.startOllama ? fb.startOllama() : { installed: false, running: false, started: false, message: "Ollama is not installed on this computer." }),
    Info: () => ({ serviceUrl: "http://127.0.0.1:1", version: "test", healthy: true, pendingConfig: fb.pendingConfig }),
    // As the service: only the content shown, by its hash.
    ApproveConfig: (hash: string) => {
      if (hash !== fb.pendingConfig?.hash) throw "the config file changed after it was shown; look at it again before approving";
      fb.pendingConfig = undefined;
    },
    Agents: () => fb.agents,
    Sessions: () => [...fb.sessions],
    // As the service: a page, newest first, the cursor the last one's id.
    SessionsPage: (_agentId: string, cursor: string) => {
      const all = [...fb.sessions].sort((x, y) => (y.updatedAt ?? "").localeCompare(x.updatedAt ?? ""));
      const from = cursor ? all.findIndex((s) => s.sessionId === cursor) + 1 : 0;
      const sessions = all.slice(from, from + fb.pageSize).map((s) => ({ ...s }));
      return { sessions, nextCursor: sessions.length === fb.pageSize ? sessions[sessions.length - 1].sessionId : undefined };
    },
    // As the service: sessions whose messages contain the text, any case, a page at a time.
    SearchSessions: (q: string, cursor: string) => {
      const all = fb.sessions.flatMap((s) => {
        const m = (fb.messages.get(s.sessionId) ?? []).find((x) => String(x.text ?? "").toLowerCase().includes(q.toLowerCase()));
        return m ? [{ session: { ...s }, messageId: m.id ?? 0, role: m.role, snippet: m.text }] : [];
      });
      const from = cursor ? Number(cursor) : 0;
      const results = all.slice(from, from + fb.searchPageSize);
      return { results, nextCursor: results.length === fb.searchPageSize ? String(from + results.length) : undefined };
    },
    NewSession: (agentId: string) => {
      const s = { sessionId: `s${++n}`, agentId };
      fb.sessions.unshift(s);
      return { ...s };
    },
    OpenSession: (id: string) => ({ sessionId: id, messages: fb.messages.get(id) ?? [], lastEventId: 0, versions: fb.versions.get(id) }),
    Reload: (id: string) => ({ sessionId: id, messages: fb.messages.get(id) ?? [], lastEventId: 0, versions: fb.versions.get(id) }),
    SendVersion: () => undefined,
    ShowVersion: () => undefined,
    RenameSession: () => undefined,
    ClearSession: (id: string) => void fb.messages.delete(id),
    DeleteSession: (id: string) => {
      fb.sessions = fb.sessions.filter((s) => s.sessionId !== id);
    },
    Send: () => undefined,
    Cancel: () => true,
    ResolvePrompt: () => undefined,
    ResolvePromptScoped: () => undefined,
    AnswerPrompt: () => undefined,
    PinSession: (id: string, pinned: boolean) => {
      const s = fb.sessions.find((x) => x.sessionId === id);
      if (!s) throw "session not found";
      s.pinnedAt = pinned ? "2026-11-25T12:00:00Z" : undefined;
    },
    AgentChoices: (id: string) => ({ ...(fb.choices.get(id) ?? {}) }),
    // As the service: a mode or model the session does not offer is refused, saying which it offers.
    ChooseForAgent: (id: string, mode: string, model: string) => {
      const c = { ...(fb.choices.get(id) ?? {}) };
      if (mode && c.modes && !c.modes.some((m) => m.id === mode)) throw `the agent does not offer the mode "${mode}" (it offers: ${c.modes.map((m) => m.id).join(", ")})`;
      if (model && c.models && !c.models.some((m) => m.id === model)) throw `the agent does not offer the model "${model}"`;
      if (mode) c.mode = mode;
      if (model) c.model = model;
      fb.choices.set(id, c);
      return { ...c };
    },
    AgentSignIn: () => ({ methods: [
      { id: "claude-login", name: "Log in with Claude Code", description: "Run `claude /login` in the terminal", kind: "terminal",
        command: "node", args: ["/usr/lib/node_modules/claude agent/cli.js"], label: "Claude Code Login" },
      { id: "chatgpt", name: "Login with ChatGPT", kind: "agent" },
      { id: "anthropic-api-key", name: "Use an API key", kind: "env_var", vars: ["ANTHROPIC_API_KEY"] },
    ] }),
    SignInAgent: (_agent: string, method: string, values: Record<string, string>) => {
      if (method === "chatgpt") throw "the agent still says you are not signed in with \"Login with ChatGPT\": the sign-in did not complete";
      if (!Object.values(values).every((v) => v.trim())) throw "give the key for ANTHROPIC_API_KEY";
    },
    RunAgentLogin: () => "Signed in (Log in with Claude Code). Send your message again.",
    ExportConversation: (_id: string, _format: string, content: string) => ({ path: "/home/ada/conversation.md", bytes: content.length }),
    ExportAllConversations: (format: string) => ({ path: `/home/ada/conversations.${format}`, bytes: 120, conversations: fb.sessions.length }),
    SessionDecisions: (id: string) => fb.decisions.get(id) ?? [],
    PermissionRules: () => ({
      workspace: "/home/ada/Jarvis", rules: fb.rules.map((r) => ({ ...r })),
      default_commands: [{ tool: "run_command", command: "ls *", action: "allow" }, { tool: "run_command", command: "git status *", action: "allow" }],
      sandbox: [{ name: "writes only in its folders", held: true, by: "bubblewrap and Landlock ABI 7" }, { name: "Jarvis's own folders out of reach", held: false, by: "needs bubblewrap, missing here" }],
      grants: fb.grants.map((g) => ({ ...g })),
      tools: [{ name: "write_file" }, { name: "run_command" }, { name: "open_url" }, { name: "mcp__every__echo", title: "Everything › Echo" }],
    }),
    // As the app: a rule without an origin was added on the page, now.
    AddRule: (next: PolicyRule) => {
      if (next.tool === "run_command" && !next.command && !next.args) throw "gate: command is empty";
      fb.rules.push(next.origin ? next : { ...next, origin: { kind: "page", at: "2026-11-29T00:30:00Z" } });
    },
    // As the gate: the rule must still be the one listed.
    RevokeRule: (i: number, seen: PolicyRule) => {
      if (JSON.stringify(fb.rules[i]) !== JSON.stringify(seen)) throw "gate: the rule changed meanwhile; reload the list";
      fb.rules.splice(i, 1);
    },
    EditRule: (i: number, seen: PolicyRule, next: PolicyRule) => {
      if (JSON.stringify(fb.rules[i]) !== JSON.stringify(seen)) throw "gate: the rule changed meanwhile; reload the list";
      fb.rules[i] = next;
    },
    PendingPrompts: () => [],
    // As the app: what "Copy diagnostics" copies (no secret).
    Diagnostics: () => "Jarvis test (commit abc)\nSystem: Debian\nKernel: 6.1\nService: on this computer (loopback)\nModel set up: yes\n",
    // As the service: a server with the one model llama3 at the Ollama port.
    TestProvider: (r: { baseUrl?: string; model?: string }) =>
      r.baseUrl !== "http://127.0.0.1:11434/v1"
        ? { ok: false, kind: "unreachable", baseUrl: r.baseUrl, message: `No server answers at ${r.baseUrl}. Is it running?` }
        : r.model === "llama3"
          ? { ok: true, kind: "ok", baseUrl: r.baseUrl, message: `Reached Ollama at ${r.baseUrl}: model llama3 found.` }
          : { ok: false, kind: "model_missing", baseUrl: r.baseUrl, message: `Reached Ollama at ${r.baseUrl}, but it has no model "${r.model}". It has llama3.` },
    Providers: () => ({ configured: true, defaultProvider: "openai-compatible", providers: {}, openaiKeyStored: false, discovered: [] }),
  };
  fb.api = new Proxy({} as AppAPI, {
    get(_, method: string) {
      return async (...args: unknown[]) => {
        fb.calls.push({ method, args });
        const fail = fails.get(method);
        if (fail !== undefined) {
          fails.delete(method);
          throw fail; // bound methods reject with a string
        }
        const held = holds.get(method);
        if (held) {
          holds.delete(method);
          await held;
        }
        const f = impl[method as keyof AppAPI];
        if (!f) throw `fake bridge: ${method} is not bound`;
        return f(...args);
      };
    },
  });
  (window as any).go = { app: { App: fb.api } };
  (window as any).runtime = {
    EventsOn(name: string, cb: (d: any) => void) {
      handlers.set(name, [...(handlers.get(name) ?? []), cb]);
      return () => undefined;
    },
    BrowserOpenURL() {},
  };
  return fb;
}

/** The window's real markup (index.html's body), for view tests. */
export function loadPage(): void {
  const html = readFileSync(resolve(__dirname, "../index.html"), "utf8");
  document.body.innerHTML = html.slice(html.indexOf("<body>") + 6, html.indexOf("<script type=\"module\""));
}

export const flush = () => new Promise((r) => setTimeout(r, 0));

/**
 * The bridge getter for an Actions of one test: bound to that test's bridge,
 * so that a timer a finished test left running (a search after a pause in
 * typing) calls its own bridge, never the next test's.
 */
export const bridgeOf = (b: FakeBridge) => () => b.api;
