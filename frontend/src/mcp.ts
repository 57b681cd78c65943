// The MCP panel: the desktop's MCP servers (from mcp.json) with their state
// (starting, ready, failed with the error), their tools, a switch per server
// and per tool, and the approval of a tool whose definition changed. It
// mounts itself (mountMCP): a button beside About and its own section, fed
// by the MCPPanel binding (app/mcp.go) and its "mcp:servers" events.
import { errText, on, openExternal } from "./bridge";
import type { SlashArgument, SlashItem } from "./slash";
import { h } from "./view";

export { progressLine, type MCPProgress } from "./lazy";

export interface MCPTool {
  name: string;
  server: string;
  tool: string;
  title?: string;
  description: string;
  readOnly?: boolean;
  destructive?: boolean;
  hash: string;
  enabled: boolean;
  changed?: boolean;
  off?: boolean;
}
export interface MCPApproval {
  hash: string;
  launch: string;
  cwd?: string;
  env?: string[];
  headers?: string[];
  changed: boolean;
  /** How a stdio server would run, in plain words (in the sandbox or WITHOUT it). */
  sandbox?: string;
  /** It asks to run without the sandbox: approving is the user's one-time confirmation. */
  unsandboxed?: boolean;
}
export interface MCPServer {
  name: string;
  approval?: MCPApproval;
  label?: string;
  warnings?: string[];
  log?: string[];
  transport: string;
  state: string;
  error?: string;
  restarts: number;
  tools: MCPTool[];
  /** Reached at a url: it may ask for a sign-in (OAuth). */
  signIn?: boolean;
  signedIn?: boolean;
  signingIn?: boolean;
  signInError?: string;
}
export interface MCPState {
  servers: MCPServer[];
  configError?: string;
  configPath: string;
}

interface MCPPanelAPI {
  MCPServers(): Promise<MCPState>;
  MCPApproveTool(name: string, hash: string): Promise<void>;
  MCPSetToolEnabled(name: string, on: boolean): Promise<void>;
  MCPSetServerEnabled(name: string, on: boolean): Promise<void>;
  MCPApproveConfig(hash: string): Promise<void>;
  MCPRestartServer(name: string): Promise<void>;
  MCPAddServer(name: string, entry: string): Promise<void>;
  MCPSetSecret(server: string, name: string, value: string): Promise<void>;
  /** Starts the sign-in; resolves to the address to open in the browser. */
  MCPSignIn(name: string): Promise<string>;
  MCPSignOut(name: string): Promise<void>;
  MCPPrompts(): Promise<MCPPrompt[]>;
  MCPOpenConfig(): Promise<void>;
  MCPResources(): Promise<MCPResource[]>;
  MCPReadResource(server: string, uri: string): Promise<{ name: string; content: string }>;
  MCPGetPrompt(server: string, name: string, args: Record<string, string>): Promise<string>;
}

/** One resource, or resource template, of an MCP server (mcp.Resource). */
export interface MCPResource {
  server: string;
  uri?: string;
  uriTemplate?: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** The event the composer takes an attachment from (conversation.ts). */
export const ATTACH_EVENT = "jarvis:attach";

/** One prompt of an MCP server (mcp.Prompt). */
export interface MCPPrompt {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments?: SlashArgument[];
}

let promptCache: { at: number; items: SlashItem[] } | undefined;

/**
 * The MCP servers' prompts as the composer's "/" menu items
 * ("/server:prompt"), read again at most every 10 s; choosing one fills it
 * (MCPGetPrompt) with the arguments asked for and puts its text in the
 * composer.
 */
export async function mcpPromptItems(): Promise<SlashItem[]> {
  if (promptCache && Date.now() - promptCache.at < 10_000) return promptCache.items;
  const api = panelAPI();
  const items = ((await api.MCPPrompts()) ?? []).map((p): SlashItem => ({
    label: `/${p.server}:${p.name}`,
    description: p.title && p.description ? `${p.title}: ${p.description}` : p.title || p.description,
    source: `MCP ${p.server}`,
    args: p.arguments ?? [],
    run: (args) => api.MCPGetPrompt(p.server, p.name, args),
  }));
  promptCache = { at: Date.now(), items };
  return items;
}

function panelAPI(): MCPPanelAPI {
  const p = (window as unknown as { go?: { app?: { MCPPanel?: MCPPanelAPI } } }).go?.app?.MCPPanel;
  if (!p) throw new Error("the MCP bindings are not available");
  return p;
}

export interface MCPActions {
  /** Opens mcp.json with the desktop's default handler. */
  openConfig?(): void;
  /** Lists the servers' resources and templates (the panel's Resources button). */
  resources?(): Promise<MCPResource[]>;
  /** Reads a resource and attaches it to the message being written. */
  attach?(server: string, uri: string): void;
  approve(tool: string, hash: string): void;
  setTool(tool: string, on: boolean): void;
  setServer(server: string, on: boolean): void;
  approveConfig(hash: string): void;
  restart(server: string): void;
  add(name: string, entry: string): void;
  secret(server: string, name: string, value: string): void;
  signIn?(server: string): void;
  signOut?(server: string): void;
}

/** Sign in / Sign out of a server that asks for a sign-in (OAuth). */
function signInRow(s: MCPServer, act: MCPActions): HTMLElement | null {
  if (!s.signIn) return null;
  const row = h("div", { class: "mcp-signin", "data-mcp-signin": s.name });
  if (s.signingIn) {
    row.append(h("span", { class: "hint" }, "Finish signing in in your browser…"));
  } else if (s.state === "signin") {
    const again = (s.error ?? "").includes("sign in again");
    row.append(h("span", { class: "warn" }, again ? `${s.label || s.name}: your sign-in expired or was revoked. ` : `${s.label || s.name} asks you to sign in. `));
    const b = h("button", { class: "small", type: "button", "data-mcp-signin-go": s.name }, again ? "Sign in again" : "Sign in");
    b.addEventListener("click", () => act.signIn?.(s.name));
    row.append(b);
  }
  if (s.signedIn && !s.signingIn) {
    const out = h("button", { class: "small", type: "button", "data-mcp-signout": s.name }, "Sign out");
    out.addEventListener("click", () => act.signOut?.(s.name));
    row.append(out);
  }
  if (s.signInError) row.append(h("p", { class: "warn" }, `The last sign-in did not succeed: ${s.signInError}`));
  return row.childNodes.length ? row : null;
}

/** A server's secret: what "${keyring:NAME}" in its entry resolves to (stored for that server only). */
function secretForm(server: string, act: MCPActions): HTMLElement {
  const name = h("input", { type: "text", placeholder: "NAME", "aria-label": `Secret name for ${server}`, "data-mcp-secret-name": server }) as HTMLInputElement;
  const value = h("input", { type: "password", autocomplete: "off", "aria-label": `Secret value for ${server}`, "data-mcp-secret-value": server }) as HTMLInputElement;
  const save = h("button", { class: "small", type: "button", "data-mcp-secret-save": server }, "Store");
  save.addEventListener("click", () => {
    act.secret(server, name.value.trim(), value.value);
    value.value = "";
  });
  return h("details", { class: "mcp-secret" }, h("summary", {}, "Store a secret for ${keyring:NAME}"), name, value, save);
}

/** The Add server form: a name and the entry's JSON, as in mcp.json. */
function addForm(act: MCPActions): HTMLElement {
  const name = h("input", { type: "text", placeholder: "name", "aria-label": "Server name", "data-mcp": "add-name" }) as HTMLInputElement;
  const entry = h("textarea", {
    rows: "3",
    "aria-label": "Server entry (JSON)",
    "data-mcp": "add-entry",
    placeholder: '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}',
  }) as HTMLTextAreaElement;
  const add = h("button", { class: "small", type: "button", "data-mcp": "add" }, "Add server");
  add.addEventListener("click", () => act.add(name.value.trim(), entry.value));
  return h("details", { class: "mcp-add" }, h("summary", {}, "Add server"), name, entry, add);
}

function switchBox(checked: boolean, label: string, change: (on: boolean) => void): HTMLElement {
  const box = h("input", { type: "checkbox", "aria-label": label }) as HTMLInputElement;
  box.checked = checked;
  box.addEventListener("change", () => change(box.checked));
  return box;
}

/** The panel's content for a state. */
/**
 * The Resources section: listed on demand (a server may have many); each
 * resource has Attach, each template a field to fill its URI in first. An
 * attached resource goes with the next message like an attached file, and
 * counts as untrusted content under its server and URI.
 */
export function resourcesSection(act: MCPActions): HTMLElement {
  const sec = h("section", { class: "mcp-resources", "data-mcp": "resources" });
  const show = h("button", { class: "small", type: "button", "data-mcp": "show-resources" }, "Resources…");
  const list = h("div", { class: "mcp-resource-list" });
  show.addEventListener("click", async () => {
    let rs: MCPResource[];
    try {
      rs = (await act.resources!()) ?? [];
    } catch (e) {
      list.replaceChildren(h("p", { class: "warn" }, errText(e)));
      return;
    }
    list.replaceChildren();
    if (!rs.length) list.append(h("p", { class: "hint" }, "No server lists resources."));
    for (const r of rs) {
      const label = `${r.server}: ${r.title || r.name}`;
      const row = h("div", { class: "mcp-resource", "data-mcp-resource": r.uri ?? r.uriTemplate ?? "" }, h("strong", {}, label), h("span", { class: "hint mono" }, ` ${r.uri ?? r.uriTemplate}`));
      if (r.description) row.append(h("div", { class: "hint" }, r.description));
      const btn = h("button", { class: "small", type: "button", "data-mcp": "attach-resource" }, "Attach");
      if (r.uri) {
        btn.addEventListener("click", () => act.attach?.(r.server, r.uri!));
        row.append(btn);
      } else {
        const field = h("input", { type: "text", class: "mono", value: r.uriTemplate ?? "", "aria-label": `The URI of ${label}` }) as HTMLInputElement;
        btn.addEventListener("click", () => act.attach?.(r.server, field.value));
        row.append(h("div", {}, field, btn));
      }
      list.append(row);
    }
  });
  sec.append(show, list);
  return sec;
}

export function renderMCP(st: MCPState, act: MCPActions): HTMLElement {
  const root = h("div", { class: "mcp" });
  if (st.configError) root.append(h("p", { class: "warn", "data-mcp": "config-error" }, `mcp.json was not applied: ${st.configError}`));
  const waiting = st.servers.filter((s) => s.approval);
  if (waiting.length) {
    // Entries made or changed outside Jarvis (an editor, another program,
    // an agent's file write) start nothing until approved here: what each
    // would run is shown, and the approval carries the hash of the file
    // shown, so a file changed since is refused.
    const box = h(
      "section",
      { class: "mcp-approval warn", "data-mcp": "approval" },
      h("p", {}, `${st.configPath} was changed outside Jarvis. These servers start only once you approve them:`),
    );
    for (const s of waiting) {
      const a = s.approval!;
      const what = [a.launch, a.cwd ? `in ${a.cwd}` : "", ...(a.env ?? []).map((e) => `env ${e}`), ...(a.headers ?? []).map((k) => `header ${k}`)];
      const entry = h("div", { "data-mcp-approval": s.name }, h("strong", {}, `${s.name} (${a.changed ? "changed" : "new"}) would ${s.transport === "http" ? "connect to" : "run"}:`), h("pre", { class: "mono" }, what.filter(Boolean).join("\n")));
      // How it would be confined; a server outside the sandbox is said
      // first and loudly: approving it is the one-time confirmation.
      if (a.sandbox) entry.append(h("p", { class: a.unsandboxed ? "warn" : "hint", "data-mcp-sandbox": a.unsandboxed ? "off" : "on" }, a.unsandboxed ? h("strong", {}, `It ${a.sandbox}.`) : `It ${a.sandbox}.`));
      box.append(entry);
    }
    const ok = h("button", { class: "small", type: "button", "data-mcp": "approve-config" }, "Approve and start");
    ok.addEventListener("click", () => act.approveConfig(waiting[0].approval!.hash));
    box.append(ok);
    root.append(box);
  }
  if (act.openConfig) {
    const open = h("button", { class: "small", type: "button", "data-mcp": "open-config", title: `Open ${st.configPath} in your editor; servers it adds or changes wait for your approval here` }, "Open mcp.json");
    open.addEventListener("click", () => act.openConfig!());
    root.append(open);
  }
  root.append(addForm(act));
  if (act.resources && st.servers.some((x) => x.state === "ready")) root.append(resourcesSection(act));
  if (!st.servers.length) {
    root.append(h("p", { class: "hint" }, `No MCP servers. Add one here, or to ${st.configPath} (the "mcpServers" shape of Claude Desktop), or run “jarvis mcp import”.`));
    return root;
  }
  for (const s of st.servers) {
    const head = h(
      "div",
      { class: "mcp-server-head" },
      switchBox(s.state !== "off", `Server ${s.name}`, (on) => act.setServer(s.name, on)),
      h("strong", {}, ` ${s.label || s.name} `),
      h("span", { class: `mcp-state mcp-${s.state}`, "data-mcp-state": s.name }, s.state),
      h("span", { class: "hint" }, ` ${s.transport}${s.restarts ? `, restarted ${s.restarts}×` : ""}`),
    );
    if (s.state === "ready" || s.state === "failed") {
      const again = h("button", { class: "small", type: "button", "data-mcp-restart": s.name }, "Restart");
      again.addEventListener("click", () => act.restart(s.name));
      head.append(again);
    }
    const box = h("section", { class: "mcp-server", "data-mcp-server": s.name }, head);
    const sign = signInRow(s, act);
    if (sign) box.append(sign);
    if (s.error && s.state !== "signin") box.append(h("pre", { class: "mcp-error" }, s.error));
    for (const w of s.warnings ?? []) box.append(h("p", { class: "hint", "data-mcp-warning": s.name }, w));
    if (s.log?.length) box.append(h("details", { class: "mcp-log", "data-mcp-log": s.name }, h("summary", {}, `Log (${s.log.length})`), h("pre", {}, s.log.join("\n"))));
    const list = h("ul", { class: "mcp-tools" });
    for (const t of s.tools) {
      const li = h(
        "li",
        { "data-mcp-tool": t.name },
        switchBox(!t.off, `Tool ${t.tool}`, (on) => act.setTool(t.name, on)),
        h("span", { class: "mono" }, ` ${t.tool}`),
        h("span", { class: "hint" }, ` ${t.title || t.description}`),
      );
      if (t.destructive) li.append(h("span", { class: "badge" }, " destructive"));
      if (t.changed) {
        const ok = h("button", { class: "small", type: "button" }, "Approve the new definition");
        // The approval carries the hash of the definition shown here: one
        // the server swapped in since is refused.
        ok.addEventListener("click", () => act.approve(t.name, t.hash));
        li.append(
          h("span", { class: "warn" }, " Its definition changed since you approved it: disabled. "),
          h("pre", { class: "mcp-def", "data-mcp-def": t.name }, [t.title, t.description].filter(Boolean).join("\n")),
          h("span", { class: "hint mono" }, ` ${t.hash.replace(/^v2:/, "").slice(0, 12)} `),
          ok,
        );
      }
      list.append(li);
    }
    box.append(list, secretForm(s.name, act));
    root.append(box);
  }
  return root;
}

/** Adds the MCP button beside About and the panel's section; keeps the panel current. */
export function mountMCP(flash: (msg: string, good?: boolean) => void): void {
  const about = document.getElementById("open-about");
  if (!about || document.getElementById("mcp")) return;
  // The button is lazy.ts's (the panel loads on its first click); made here when missing.
  let btn = document.getElementById("open-mcp");
  if (!btn) about.before((btn = h("button", { id: "open-mcp", class: "small", type: "button", title: "MCP servers and their tools" }, "MCP")));
  const sec = h("section", { id: "mcp", role: "region", "aria-label": "MCP servers" });
  sec.hidden = true;
  (document.getElementById("about") ?? document.body.lastElementChild ?? document.body).after(sec);
  let state: MCPState | null = null;
  const run = (p: Promise<void>) => p.catch((e) => flash(errText(e)));
  const act: MCPActions = {
    approve: (t, hash) => run(panelAPI().MCPApproveTool(t, hash).then(() => flash(`Approved the new definition of ${t}.`, true))),
    setTool: (t, on) => run(panelAPI().MCPSetToolEnabled(t, on)),
    setServer: (s, on) => run(panelAPI().MCPSetServerEnabled(s, on)),
    approveConfig: (hash) => run(panelAPI().MCPApproveConfig(hash).then(() => flash("Approved mcp.json: its servers start.", true))),
    restart: (s) => run(panelAPI().MCPRestartServer(s)),
    add: (n, e) => run(panelAPI().MCPAddServer(n, e).then(() => flash(`Added ${n}.`, true))),
    secret: (srv, n, v) => run(panelAPI().MCPSetSecret(srv, n, v).then(() => flash(`Stored the secret ${n} for ${srv}.`, true))),
    // The desktop opens the authorization address in the user's browser;
    // the browser comes back to Jarvis on 127.0.0.1 and the server starts.
    signIn: (srv) =>
      run(
        panelAPI()
          .MCPSignIn(srv)
          .then((u) => {
            openExternal(u);
            flash(`Finish signing in to ${srv} in your browser.`, true);
          }),
      ),
    signOut: (srv) => run(panelAPI().MCPSignOut(srv).then(() => flash(`Signed out of ${srv}.`, true))),
    resources: () => panelAPI().MCPResources(),
    openConfig: () => run(panelAPI().MCPOpenConfig()),
    attach: (srv, uri) =>
      run(
        panelAPI()
          .MCPReadResource(srv, uri)
          .then((a) => {
            document.dispatchEvent(new CustomEvent(ATTACH_EVENT, { detail: a }));
            flash(`Attached ${a.name} to your next message.`, true);
          }),
      ),
  };
  const draw = () => {
    if (!state) return;
    const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "✕");
    close.addEventListener("click", () => (sec.hidden = true));
    sec.replaceChildren(h("div", { class: "setup-head" }, h("h2", {}, "MCP servers"), close), renderMCP(state, act));
  };
  btn.addEventListener("click", async () => {
    if (!sec.hidden) {
      sec.hidden = true;
      return;
    }
    try {
      state = await panelAPI().MCPServers();
    } catch (e) {
      flash(errText(e));
      return;
    }
    draw();
    sec.hidden = false;
  });
  on("mcp:servers", (s: MCPState) => {
    state = s;
    btn!.classList.toggle("attention", s.servers.some((x) => x.approval));
    if (!sec.hidden) draw();
  });
}
