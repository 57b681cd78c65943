// The MCP panel: the desktop's MCP servers (from mcp.json) with their state
// (starting, ready, failed with the error), their tools, a switch per server
// and per tool, and the approval of a tool whose definition changed. It
// mounts itself (mountMCP): a button beside About and its own section, fed
// by the MCPPanel binding (app/mcp.go) and its "mcp:servers" events.
import { errText, on } from "./bridge";
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
}

function panelAPI(): MCPPanelAPI {
  const p = (window as unknown as { go?: { app?: { MCPPanel?: MCPPanelAPI } } }).go?.app?.MCPPanel;
  if (!p) throw new Error("the MCP bindings are not available");
  return p;
}

export interface MCPActions {
  approve(tool: string, hash: string): void;
  setTool(tool: string, on: boolean): void;
  setServer(server: string, on: boolean): void;
  approveConfig(hash: string): void;
  restart(server: string): void;
  add(name: string, entry: string): void;
  secret(server: string, name: string, value: string): void;
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
  root.append(addForm(act));
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
    if (s.error) box.append(h("pre", { class: "mcp-error" }, s.error));
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
