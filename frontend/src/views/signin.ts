// Signing an ACP agent in from its "needs you to sign in" error: the
// methods it offered (app.AgentSignIn); for a method that reads a key from
// the agent's environment, a form whose keys go to the keyring
// (app.SignInAgent); for a login run in a terminal, the command shown and
// a button that opens a terminal running it (app.RunAgentLogin, which
// waits for it and signs the agent in); for a login the agent runs itself
// (codex's ChatGPT), a button that asks it to (app.SignInAgent without
// keys). Then the turn is asked again.
import { errText, type AppAPI } from "../bridge";
import { h } from "../view";

export interface SignInMethod {
  id: string;
  name: string;
  description?: string;
  kind: string; // env_var | terminal | agent
  vars?: string[];
  command?: string; // terminal: the login program and its arguments
  args?: string[];
  label?: string;
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
  if (m.kind === "terminal" && m.command) {
    const line = [m.command, ...(m.args ?? [])].map(shellWord).join(" ");
    return runner(m, title, [h("div", { class: "hint" }, "Jarvis opens a terminal running: ", h("code", {}, line),
      ". Sign in there; when it ends, Jarvis signs the agent in and sends your message again.")],
      "Open a terminal and sign in", "Waiting for the sign-in in the terminal…", () => api().RunAgentLogin(agentId, m.id), retry);
  }
  if (m.kind === "agent") {
    return runner(m, title, [h("div", { class: "hint" }, "The agent signs you in itself (it may open your browser); then Jarvis sends your message again.")],
      "Sign in", "Waiting for the agent to sign you in…", () => api().SignInAgent(agentId, m.id, {}), retry);
  }
  if (m.kind !== "env_var" || !m.vars?.length) {
    return h("div", { class: "sign-in-method", "data-method": m.id }, title,
      h("div", { class: "hint" }, "Jarvis cannot run this sign-in for you: do it outside Jarvis as the description says, then send the message again."));
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

// runner is a method Jarvis runs on a click: what will happen, the button,
// the progress while it runs, and the outcome (an error in words, or the
// turn asked again).
function runner(m: SignInMethod, title: HTMLElement, about: HTMLElement[], label: string, waiting: string,
  run: () => Promise<unknown>, retry: () => void): HTMLElement {
  const box = h("div", { class: "sign-in-method", "data-method": m.id });
  const status = h("div", { class: "hint", role: "status" });
  const problem = h("div", { class: "form-error", role: "alert" });
  const go = h("button", { type: "button", class: "small" }, label);
  go.addEventListener("click", async () => {
    problem.textContent = "";
    status.textContent = waiting;
    go.setAttribute("disabled", "");
    try {
      await run();
      status.textContent = "Signed in. Sending your message again…";
      retry();
    } catch (ex) {
      status.textContent = "";
      problem.textContent = errText(ex);
    } finally {
      go.removeAttribute("disabled");
    }
  });
  box.append(title, ...about, go, status, problem);
  return box;
}

// shellWord is one word of a command line as the user would type it.
function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`;
}
