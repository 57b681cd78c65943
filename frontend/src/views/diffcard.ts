// A file change an ACP agent reported in a tool call (status kind "diff",
// transcript.ts) as a diff card: the file, its lines removed and added
// (undo.ts's line diff), and whether it can be undone. A file Jarvis wrote
// for the agent was saved by the desktop before the change: the turn's
// "Undo these changes" (undo.ts) restores it. A file the agent wrote
// itself was not: the card says so, and offers no undo.
import type { AgentDiff } from "../transcript";
import { lineDiff } from "../undo";
import { h } from "../view";

export function diffCard(d: AgentDiff): HTMLElement {
  const created = d.old === undefined || d.old === null;
  const title = `${created ? "Created" : "Changed"} ${d.path}`;
  let body: HTMLElement;
  if (d.omitted) {
    body = h("div", { class: "undo-diff binary" }, "The change is too long to show here.");
  } else {
    body = h("pre", { class: "undo-diff" });
    for (const l of lineDiff(created ? "" : d.old!, d.new)) {
      body.append(h("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same" }, `${l.op} ${l.text}\n`));
    }
  }
  const undo = d.undo === "turn"
    ? "Jarvis wrote this file for the agent and saved it first: “Undo these changes” under this turn restores it."
    : "The agent wrote this file itself, outside Jarvis: Jarvis has no copy of the file as it was, so it cannot undo this change.";
  return h("div", { class: "diff-card", role: "group", "aria-label": title },
    h("div", { class: "diff-title" }, title, d.title ? h("span", { class: "hint" }, ` · ${d.title}`) : ""),
    body,
    h("div", { class: `hint diff-undo ${d.undo === "turn" ? "undoable" : "not-undoable"}` }, undo));
}
