// The permission prompt's view of a call: what the call acts on first and in
// full, then the canonical form that will run (app/gate.Prompt).
import { h } from "./view";

/** A permission prompt of the gate (app/gate.Prompt). */
export interface Prompt {
  id: string;
  tool_call_id: string;
  session_id?: string;
  tool: string;
  /** The tool's name for people when tool is not one (an MCP tool: "Everything › Echo"). */
  title?: string;
  /** The tool's schema description: for the model, never shown. */
  description?: string;
  /** What the rule that made the call ask says of it ("this file holds credentials"). */
  note?: string;
  /** What the call acts on (path, command line, URL, agent), in full. */
  decisive?: { name: string; value: string }[];
  /** The canonical form that will run; the user may edit it. */
  arguments: unknown;
  /** The model's own spelling, when it differs from the canonical form. */
  requested?: unknown;
  /** Where a service-run tool sends its data. */
  target?: string;
  risk: string;
  reason: string;
  model_reason?: string;
  destructive?: boolean;
  choices: string[];
  deadline: string;
  /** The rules "always allow" may save, narrowest first (app/gate.Scope). */
  scopes?: { label: string; rule: PolicyRule }[];
  /** For a write_file over an existing file: what would change (app/gate.Diff). */
  diff?: PromptDiff;
  /** What untrusted content the conversation has read, in words (app/gate/taint.go). */
  untrusted?: string[];
  /** Where the call would send data, when it asks because of that content. */
  destination?: string;
}

/**
 * The warning of a call that would send data out after the conversation read
 * content someone else wrote: what was read and where the data would go;
 * undefined when the conversation read none.
 */
export function untrustedWarning(p: Prompt): HTMLElement | undefined {
  if (!p.untrusted?.length) return undefined;
  const read = h("ul", {}, ...p.untrusted.map((s) => h("li", {}, s)));
  if (!p.destination) {
    return h("div", { class: "prompt-untrusted quiet" }, h("div", {}, "This conversation has read content someone else wrote:"), read);
  }
  return h("div", { class: "prompt-untrusted", role: "alert" },
    h("strong", {}, "This could send your data out."),
    h("div", {}, "This conversation has read content someone else wrote, which may be telling the agent what to do:"), read,
    h("div", {}, `This call would send data to ${p.destination}. Check what it sends below. It asks even though a rule allows such calls.`));
}

/** A line diff of an existing file against what a write would put there. */
export interface PromptDiff {
  /** op " " unchanged, "-" removed, "+" added, "…" unchanged lines left out (text says how many). */
  lines?: { op: string; text: string }[];
  added: number;
  removed: number;
  truncated?: boolean;
  /** Why there is no line diff (binary, too large) or that nothing changes. */
  note?: string;
}

/**
 * The diff a write_file prompt shows instead of the whole content, as a
 * labelled block of lines; undefined when the file is new (or the app sent
 * none), and then contentPreview shows the content.
 */
export function diffPreview(p: Prompt): { label: string; block: HTMLElement } | undefined {
  const d = p.diff;
  if (p.tool !== "write_file" || !d || !d.lines?.length) return undefined;
  const n = (k: number, one: string) => `${k} ${one}${k === 1 ? "" : "s"}`;
  const cls: Record<string, string> = { "-": "diff-del", "+": "diff-add", "…": "diff-skip" };
  const mark: Record<string, string> = { "-": "− ", "+": "+ ", "…": "⋯ ", " ": "  " };
  const block = h("pre", { class: "prompt-preview-text prompt-diff" },
    ...d.lines.map((l) => h("span", { class: cls[l.op] ?? "diff-same" }, mark[l.op] ?? "  ", l.text, "\n")),
    ...(d.truncated ? [h("span", { class: "diff-skip" }, "⋯ the diff goes on; open Arguments for the whole new content\n")] : []),
  );
  const note = d.note ? ` ${d.note}` : "";
  return { label: `It will change the existing file: ${n(d.removed, "line")} removed (−), ${n(d.added, "line")} added (+).${note}`, block };
}

/** A rule of the gate's policy (app/gate.Rule). */
export interface PolicyRule {
  tool: string;
  args?: Record<string, string>;
  /** A command rule: program and argument prefix ("git diff *"), see app/gate/commands.go. */
  command?: string;
  /** The workspace a command rule is limited to; absent: every workspace. */
  workspace?: string;
  /** A command rule that lets the program reach the network. */
  network?: boolean;
  action: string;
  /** An allow rule that holds even after the conversation read untrusted content (app/gate/taint.go). */
  untrusted?: boolean;
  /** Said in the prompt of a call the rule makes ask (the default credential-store rules: "this file holds credentials"). */
  note?: string;
  /** Where the rule came from (app/gate.Origin); absent: written by hand or before rules had one. */
  origin?: { kind: string; session_id?: string; chat?: string; at: string };
}

/**
 * The one word for how risky a call is, the same on the prompt and on the
 * tool card: the gate's class (safe, risky, forbidden) in words.
 */
export function riskWord(risk: string | undefined): string {
  return ({ safe: "safe", risky: "risky", forbidden: "blocked" } as Record<string, string>)[risk ?? ""] ?? (risk || "");
}

/** A tool's name for people: its title (MCP: "Everything › Echo"), else its name in words ("write_file" → "Write file"). */
export function toolLabel(tool: string, title?: string): string {
  if (title) return title;
  const m = tool.match(/^mcp__(.+?)__(.+)$/);
  const words = (s: string) => {
    const w = s.split(/[_\-.]+/).filter(Boolean).join(" ");
    return w ? w[0].toUpperCase() + w.slice(1) : s;
  };
  return m ? `${words(m[1])} › ${words(m[2])}` : words(tool);
}

/** Enter must never approve these: the focus starts on Deny. */
export function riskyPrompt(p: Prompt): boolean {
  return !!p.destructive || p.risk !== "safe";
}

/** The question in plain words: what the call does to what, e.g. "Write the file notes.txt?". */
export function promptTitle(p: Prompt): string {
  const a = (p.arguments ?? {}) as Record<string, any>;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  switch (p.tool) {
    case "write_file":
      return `Write the file ${str(a.path)}?`;
    case "edit_file":
      return `Edit the file ${str(a.path)}?`;
    case "make_dir":
      return `Create the folder ${str(a.path)}?`;
    case "move_path":
      return `Move ${str(a.from)} to ${str(a.to)}${a.overwrite ? ", replacing what is there" : ""}?`;
    case "delete_path":
      return `Delete ${str(a.path)} (to Jarvis's trash)?`;
    case "search_files":
      return `Search the files in ${str(a.path) || "the workspace"}?`;
    case "read_file":
      return `Read the file ${str(a.path)}?`;
    case "list_dir":
      return `List the folder ${str(a.path) || "."}?`;
    case "open_path":
      return `Open ${str(a.path)}?`;
    case "open_url":
      return `Open ${str(a.url)} in your browser?`;
    case "open_app":
      return `Start the app ${str(a.app_id)}?`;
    case "run_command":
      return `${p.destructive ? "Delete with" : "Run"} the program ${str(a.program)}?`;
    case "clipboard_read":
      return "Read your clipboard?";
    case "clipboard_write":
      return "Replace what is on your clipboard?";
    case "agents_message":
      return `Send a message to the agent ${str(a.agentId)}?`;
    case "mcp_sampling":
      return `Let the MCP server ${str(a.server)} use your model ${str(a.model)}?`;
    case "schedule_task":
      return `Schedule the task \u201c${str(a.name)}\u201d?`;
  }
  return `Use ${toolLabel(p.tool, p.title)}?`;
}

/**
 * What will happen, in one plain sentence built from the arguments (never
 * the tool's schema description, which is written for the model).
 */
export function promptSentence(p: Prompt): string {
  const a = (p.arguments ?? {}) as Record<string, any>;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const lines = (t: unknown) => {
    const n = typeof t === "string" && t !== "" ? t.replace(/\n$/, "").split("\n").length : 0;
    return `${n} line${n === 1 ? "" : "s"}`;
  };
  const where = str(a.path) || "the workspace";
  switch (p.tool) {
    case "write_file":
      return p.diff ? `Jarvis will replace the text of ${str(a.path)} with ${lines(a.content)} (the changes are shown below).` : `Jarvis will create ${str(a.path)} with ${lines(a.content)} of text; if the file exists, it is replaced.`;
    case "edit_file":
      return `Jarvis will change one passage of ${str(a.path)}: the old lines below become the new ones.`;
    case "make_dir":
      return `Jarvis will create the folder ${str(a.path)}.`;
    case "move_path":
      return `Jarvis will move ${str(a.from)} to ${str(a.to)}${a.overwrite ? ", replacing what is there" : ""}. You can undo it.`;
    case "delete_path":
      return `Jarvis will move ${str(a.path)} to its own trash. You can undo it.`;
    case "search_files":
      return `The agent will search the files in ${where} and read the lines that match.`;
    case "read_file":
      return `The agent will read ${str(a.path)} and see all of its text.`;
    case "list_dir":
      return `The agent will see the names of the files in ${str(a.path) || "the workspace"}.`;
    case "open_path":
      return `Jarvis will open ${str(a.path)} with its usual app.`;
    case "open_url":
      return `Your browser will open ${str(a.url)}.`;
    case "open_app":
      return `Jarvis will start the app ${str(a.app_id)}.`;
    case "run_command": {
      const line = [str(a.program), ...(Array.isArray(a.args) ? a.args.map(String) : [])].join(" ");
      return `Jarvis will run ${line} in ${str(a.cwd) || "your workspace"}, ${a.network ? "with" : "without"} access to the network.`;
    }
    case "clipboard_read":
      return "The agent will see what you last copied.";
    case "clipboard_write":
      return "Jarvis will replace what is on your clipboard with the text below.";
    case "agents_message":
      return `Jarvis will send the message below to the agent ${str(a.agentId)}${p.target ? ` (${p.target})` : ""}.`;
    case "schedule_task":
      return "Jarvis will run this task on its schedule below, also while you are away, with only the tools named; calls your policy asks about wait for you, and its results come to your Inbox.";
    case "mcp_sampling": {
      const n = Array.isArray(a.messages) ? a.messages.length : 0;
      return `The server ${str(a.server)} asks for a completion: ${str(a.model)} will read the ${n === 1 ? "message" : `${n} messages`} below, and its answer goes back to the server (counted in this conversation's usage).`;
    }
  }
  const given = Object.entries(a).filter(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean").slice(0, 3)
    .map(([k, v]) => `${k.replace(/[_-]+/g, " ")} “${String(v).length > 60 ? String(v).slice(0, 60) + "…" : v}”`);
  const m = p.tool.match(/^mcp__(.+?)__/);
  const who = m ? `the ${toolLabel(p.tool, p.title).split(" › ")[0]} server` : "Jarvis";
  return `The agent asks ${who} to run ${toolLabel(p.tool, p.title).split(" › ").pop()}${given.length ? ` with ${given.join(", ")}` : ""}.`;
}

/** Why Jarvis asks, in words, when there is more to say than the question: the asking rule's note, a delete, a shell. */
export function askReason(p: Prompt): string {
  const why: string[] = [];
  if (p.note) why.push(p.note[0].toUpperCase() + p.note.slice(1) + ".");
  if (p.destructive) why.push("It deletes, so Jarvis asks every time.");
  else if (p.tool === "run_command" && /always asks/.test(p.reason ?? "")) why.push("A shell command line can do anything, so Jarvis asks every time.");
  return why.join(" ");
}

/** The full path a file tool acts on, inside the workspace; "" for other tools. */
export function workspacePath(p: Prompt, workspace: string): string {
  const path = (p.arguments as Record<string, unknown> | null)?.path;
  if (!workspace || typeof path !== "string" || !["write_file", "edit_file", "make_dir", "delete_path", "search_files", "read_file", "list_dir", "open_path"].includes(p.tool)) return "";
  if (path.startsWith("/")) return path;
  return path === "." || path === "" ? workspace : `${workspace.replace(/\/+$/, "")}/${path}`;
}

/** The text a call will write, shown as text (not as an escaped JSON string). */
export function contentPreview(p: Prompt): { label: string; text: string } | undefined {
  const a = (p.arguments ?? {}) as Record<string, unknown>;
  if (p.tool === "write_file" && typeof a.content === "string") {
    const note = p.diff?.note ? `${p.diff.note} ` : "";
    return { label: `${note}It will write exactly this${p.diff ? "" : " (replacing the file if it exists)"}:`, text: a.content };
  }
  if (p.tool === "edit_file" && typeof a.old_string === "string" && typeof a.new_string === "string") {
    const lines = (prefix: string, t: string) => t.split("\n").map((l) => prefix + l);
    return { label: "It will replace the lines marked - with those marked +:", text: [...lines("- ", a.old_string), ...lines("+ ", a.new_string)].join("\n") };
  }
  if (p.tool === "clipboard_write" && typeof a.text === "string") return { label: "It will put this on the clipboard:", text: a.text };
  if (p.tool === "agents_message" && typeof a.content === "string") return { label: "The message:", text: a.content };
  return undefined;
}

/** A policy rule in plain words, e.g. "Allow write_file on path notes/*". */
export function ruleText(r: PolicyRule): string {
  const verb = { allow: "Allow", ask: "Always ask for", deny: "Never allow" }[r.action] ?? r.action;
  if (r.command) {
    return `${verb} the command ${r.command}${r.network ? ", with network" : ""}${r.workspace ? ` in ${r.workspace}` : " in every workspace"}`;
  }
  const args = Object.entries(r.args ?? {}).map(([k, v]) => `${k} ${v}`);
  const also = r.untrusted && r.action === "allow" ? ", also after untrusted content" : "";
  const text = `${verb} ${r.tool === "*" ? "every tool" : r.tool}${args.length ? ` when ${args.join(" and ")}` : " (any arguments)"}${also}`;
  return r.note ? `${text} — ${r.note}` : text;
}

/**
 * The decisive part of a prompt: one row per field, in the gate's order,
 * every value whole (no ellipsis; long values wrap), as text, never markup.
 */
export function decisiveList(p: Prompt): HTMLElement {
  const dl = h("dl", { class: "prompt-decisive" });
  for (const f of p.decisive ?? []) {
    dl.append(h("dt", {}, f.name), h("dd", { class: "prompt-decisive-value" }, f.value));
  }
  return dl;
}

/**
 * A line naming the model's own spelling when the gate rewrote it, field by
 * field in words ("The agent asked for path “./config//.env”"), not as JSON.
 */
export function requestedLine(p: Prompt): string {
  if (p.requested === undefined || p.requested === null) return "";
  const req = (typeof p.requested === "object" && !Array.isArray(p.requested) ? p.requested : {}) as Record<string, unknown>;
  const now = (p.arguments ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : Array.isArray(v) ? v.map(String).join(" ") : String(v));
  const differ = Object.entries(req).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(now[k])).slice(0, 3)
    .map(([k, v]) => `${k.replace(/[_-]+/g, " ")} “${text(v).length > 80 ? text(v).slice(0, 80) + "…" : text(v)}”`);
  return differ.length
    ? `The agent asked for ${differ.join(", ")}; this is the same call in the form that will run.`
    : "The agent wrote this call differently; this is the same call in the form that will run.";
}

/** The textarea's text: the canonical arguments, decisive names first. */
export function argumentsText(p: Prompt): string {
  const args = (p.arguments ?? {}) as Record<string, unknown>;
  if (typeof args !== "object" || Array.isArray(args)) return JSON.stringify(args, null, 2);
  const first = DECISIVE_KEYS.filter((k) => k in args);
  const ordered: Record<string, unknown> = {};
  for (const k of first) ordered[k] = args[k];
  for (const k of Object.keys(args)) if (!(k in ordered)) ordered[k] = args[k];
  return JSON.stringify(ordered, null, 2);
}

// Argument names that say what a call acts on, in the order shown.
const DECISIVE_KEYS = ["program", "args", "cwd", "path", "url", "app_id", "agentId", "task", "title", "text"];
