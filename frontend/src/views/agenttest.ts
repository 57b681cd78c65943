// The Test dialog of a proxy agent: one real request with sample values and
// the report of what came back (panels.ts testReport).
import type { Actions } from "../actions";
import { errText, type Agent } from "../bridge";
import { testReport } from "../panels";
import { h } from "../view";

export function mountAgentTest(actions: Actions): void {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const dlg = $("agent-test");
  const report = $("agent-test-report");
  let testing: Agent | undefined;

  actions.store.subscribe("agentTest", (a) => {
    testing = a;
    $("agent-test-title").textContent = `Test “${a.displayName}”`;
    report.replaceChildren(h("p", { class: "hint" }, "Sends the agent one real request with sample values and shows what came back."));
    dlg.hidden = false;
    $("agent-test-text").focus();
  });
  $("agent-test-close").addEventListener("click", () => (dlg.hidden = true));
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") dlg.hidden = true;
  });
  $("agent-test-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!testing) return;
    report.replaceChildren(h("p", { class: "hint" }, "Waiting for the agent…"));
    try {
      report.replaceChildren(testReport(await actions.api().TestAgent(testing.agentId, $<HTMLInputElement>("agent-test-text").value)));
    } catch (ex) {
      report.replaceChildren(h("div", { class: "form-error test-error" }, errText(ex)));
    }
  });
}
