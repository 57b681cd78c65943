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
