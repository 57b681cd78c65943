// A coding agent's plan (status events of kind "plan", transcript.ts) as a
// checklist card in the conversation: each step with its state, the step
// in progress marked, updated in place as the agent reports the plan again.
import type { PlanStep } from "../transcript";
import { h } from "../view";

const labels: Record<string, string> = { completed: "done", in_progress: "in progress", pending: "to do" };

export function planCard(steps: PlanStep[]): HTMLElement {
  const done = steps.filter((s) => s.status === "completed").length;
  const list = h("ul", { class: "plan-steps" });
  for (const s of steps) {
    const box = h("input", { type: "checkbox", disabled: "", "aria-label": `${s.content}: ${labels[s.status] ?? s.status}` }) as HTMLInputElement;
    box.checked = s.status === "completed";
    list.append(h("li", { class: `plan-step ${s.status}` }, box, h("span", {}, s.content)));
  }
  return h("div", { class: "plan-card", role: "group", "aria-label": "Plan" }, h("div", { class: "plan-title" }, `Plan · ${done} of ${steps.length} done`), list);
}
