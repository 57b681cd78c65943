// Signing an ACP agent in from its "needs you to sign in" error: the
// methods it offered (app.AgentSignIn); for a method that reads a key from
// the agent's environment, a form whose keys go to the keyring
// (app.SignInAgent), then the turn is asked again. A method that needs a
// login run in a terminal or inside the agent is described: Jarvis does not
// run it for you yet.
import { errText, type AppAPI } from "../bridge";
import { h } from "../view";

export interface SignInMethod {
  id: string;
  name: string;
  description?: string;
  kind: string; // env_var | terminal | agent
  vars?: string[];
}

export function signInForm(api: () => AppAPI, agentId: string, retry: () => void): HTMLElement {
  const box = h("div", { class: "sign-in", role: "group", "aria-label": "Sign in" }, h("div", { class: "hint" }, "Reading the agent's sign-in methods…"));
  api().AgentSignIn(agentId).then(({ methods }) => {
    if (!methods?.length) {
      box.replaceChildren(h("div", { class: "hint" }, "The agent named no sign-in method Jarvis knows. Send the message again to ask it."));
      return;
    }
    box.replaceChildren(...methods.map((m) => method(api, agentId, m, retry)));
  }, (ex) => box.replaceChildren(h("div", { class: "form-error", role: "alert" }, errText(ex))));
  return box;
}

function method(api: () => AppAPI, agentId: string, m: SignInMethod, retry: () => void): HTMLElement {
  const title = h("div", { class: "sign-in-title" }, m.name || m.id, m.description ? h("span", { class: "hint" }, ` — ${m.description}`) : "");
  if (m.kind !== "env_var" || !m.vars?.length) {
    return h("div", { class: "sign-in-method", "data-method": m.id }, title,
      h("div", { class: "hint" }, "Jarvis cannot run this sign-in for you yet: do it outside Jarvis as the description says, then send the message again."));
  }
  const form = h("form", { class: "sign-in-method", "data-method": m.id }) as HTMLFormElement;
  const inputs = m.vars.map((v) => h("input", { type: "password", autocomplete: "off", "aria-label": v, "data-var": v }) as HTMLInputElement);
  const problem = h("div", { class: "form-error", role: "alert" });
  const save = h("button", { type: "submit", class: "small" }, "Save the key and retry");
  form.append(title, ...m.vars.map((v, i) => h("label", {}, `${v} `, inputs[i])),
    h("div", { class: "hint" }, "Kept in your keyring and given to the agent when it starts; never shown to a model."), save, problem);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const values: Record<string, string> = {};
    m.vars!.forEach((v, i) => (values[v] = inputs[i].value));
    problem.textContent = "";
    save.setAttribute("disabled", "");
    try {
      await api().SignInAgent(agentId, m.id, values);
      for (const i of inputs) i.value = "";
      retry();
    } catch (ex) {
      problem.textContent = errText(ex);
    } finally {
      save.removeAttribute("disabled");
    }
  });
  return form;
}
