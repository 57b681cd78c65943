// The modes and models picker of a conversation with an ACP agent: the
// modes and models its session offers (status kind "agent_choices",
// transcript.ts; or GET /v1/sessions/{id}/agent-choice when the
// conversation opens), the current ones selected. A choice is sent to the
// service (app.ChooseForAgent), which keeps it with the conversation and
// sends it to the agent at once when it runs, else to its next session.
import { errText, type AppAPI } from "../bridge";
import type { AgentChoices } from "../transcript";
import { h } from "../view";

export interface ChoicePicker {
  el: HTMLElement;
  /** The open conversation: its agent's choices are read when it is an ACP agent's; else the picker hides. */
  show(sessionId: string | undefined, acp: boolean): void;
  /** The choices the agent reported for a conversation. */
  set(sessionId: string, c: AgentChoices): void;
}

export function agentChoicePicker(api: () => AppAPI): ChoicePicker {
  const el = h("div", { class: "agent-choice", hidden: "", role: "group", "aria-label": "The agent's mode and model" });
  let current: string | undefined;
  let shown: AgentChoices = {};
  const problem = h("span", { class: "form-error", role: "alert" });

  const select = (what: "mode" | "model", list: { id: string; name: string; description?: string }[], value: string | undefined): HTMLElement => {
    const s = h("select", { "aria-label": what === "mode" ? "Mode" : "Model", "data-choice": what }) as HTMLSelectElement;
    for (const o of list) {
      const opt = h("option", { value: o.id }, o.name || o.id) as HTMLOptionElement;
      if (o.description) opt.title = o.description;
      s.append(opt);
    }
    if (value) s.value = value;
    s.addEventListener("change", async () => {
      const sessionId = current;
      if (!sessionId) return;
      problem.textContent = "";
      s.disabled = true;
      try {
        const got = await api().ChooseForAgent(sessionId, what === "mode" ? s.value : "", what === "model" ? s.value : "");
        if (sessionId === current) paint(got);
      } catch (ex) {
        problem.textContent = errText(ex);
        if (sessionId === current) {
          const keep = what === "mode" ? shown.mode : shown.model;
          if (keep) s.value = keep;
        }
      } finally {
        s.disabled = false;
      }
    });
    return h("label", {}, what === "mode" ? "Mode " : "Model ", s);
  };

  const paint = (c: AgentChoices) => {
    shown = c;
    const parts: (Node | string)[] = [];
    if (c.modes?.length) parts.push(select("mode", c.modes, c.mode));
    if (c.models?.length) parts.push(select("model", c.models, c.model));
    if (!parts.length && (c.mode || c.model)) {
      // The agent is not running: the kept choice, sent when it starts.
      const kept = [c.mode ? `mode ${c.mode}` : "", c.model ? `model ${c.model}` : ""].filter(Boolean).join(", ");
      parts.push(h("span", { class: "hint" }, `Chosen: ${kept} (sent when the agent starts)`));
    }
    el.replaceChildren(...parts, problem);
    el.hidden = parts.length === 0;
  };

  return {
    el,
    show(sessionId, acp) {
      if (sessionId === current && acp) return;
      current = acp ? sessionId : undefined;
      problem.textContent = "";
      paint({});
      if (!current) return;
      const asked = current;
      api().AgentChoices(asked).then((c) => {
        if (asked === current) paint(c);
      }, () => { /* no choices to show: the picker stays hidden */ });
    },
    set(sessionId, c) {
      if (sessionId !== current) return;
      paint(c);
    },
  };
}
