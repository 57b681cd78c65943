// The permission prompt's view of a call: what the call acts on first and in
// full, then the canonical form that will run (app/gate.Prompt).
import { h } from "./view";

/** A permission prompt of the gate (app/gate.Prompt). */
export interface Prompt {
  id: string;
  tool_call_id: string;
  session_id?: string;
  tool: string;
  description?: string;
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
  }
  return `Allow “${p.tool}”?`;
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

/** A line naming the model's own spelling when the gate rewrote it. */
export function requestedLine(p: Prompt): string {
  if (p.requested === undefined || p.requested === null) return "";
  return `The agent wrote ${JSON.stringify(p.requested)}; this is the same call in the form that will run.`;
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
