// The model switch in the header: the chat model of the open conversation's
// agent, and the other models its server lists (the setup panel's discovery
// of local servers). Choosing one saves it as the provider's model through
// PUT /v1/providers (the setup panel's route), so it applies to the next
// turns of every agent that uses the provider's model, and stays after a
// restart. An agent whose config names its own model shows it, fixed.
import type { Actions } from "../actions";
import { errText, type ProvidersInfo } from "../bridge";
import { h } from "../view";

const trim = (u?: string) => (u ?? "").replace(/\/+$/, "");

/** The models to offer: the provider's current one first, then the ones its server lists. */
export function modelChoices(p: ProvidersInfo): string[] {
  const cur = p.providers?.[p.defaultProvider];
  const out = cur?.model ? [cur.model] : [];
  if (p.defaultProvider === "openai-compatible") {
    for (const d of p.discovered ?? []) {
      if (trim(d.baseUrl) !== trim(cur?.baseUrl)) continue;
      for (const m of d.models) if (!out.includes(m)) out.push(m);
    }
  }
  return out;
}

export function mountModel(actions: Actions, flash: (text: string, good?: boolean) => void): void {
  const store = actions.store;
  const sel = h("select", { id: "model-switch", "aria-label": "Model" }) as HTMLSelectElement;
  const label = h("label", { class: "switch", id: "model-label", hidden: "" }, "Model ", sel);
  document.getElementById("agent-switch")!.closest("label")!.after(label);
  let info: ProvidersInfo | undefined;
  let seq = 0;

  const render = () => {
    const a = store.agent(store.current()?.agentId ?? store.agentId);
    const cur = info?.providers?.[info.defaultProvider];
    if (!a || a.type !== "chat" || !info?.configured || !cur?.model) {
      label.hidden = true;
      return;
    }
    label.hidden = false;
    // An agent with a model of its own (chat.model in the config) is not
    // switched by the provider's model.
    const own = !!a.model && a.model !== cur.model;
    const models = own ? [a.model!] : modelChoices(info);
    sel.replaceChildren(...models.map((m) => h("option", { value: m }, m)));
    sel.value = own ? a.model! : cur.model;
    sel.disabled = own || models.length < 2;
    sel.title = own
      ? `${a.displayName} uses its own model (chat.model in the config file)`
      : models.length < 2
        ? "The model server lists no other model"
        : "The chat model for the next replies (saved as the provider's model)";
  };

  const load = async () => {
    const mine = ++seq;
    try {
      const p = await actions.api().Providers();
      if (mine !== seq) return;
      info = p;
    } catch {
      info = undefined;
    }
    render();
  };

  sel.addEventListener("change", async () => {
    const cur = info?.providers?.[info.defaultProvider];
    if (!info || !cur) return;
    const model = sel.value;
    sel.disabled = true;
    try {
      info = await actions.api().SetProvider({ provider: info.defaultProvider, baseUrl: cur.baseUrl, model });
      flash(`Model: ${model} (from the next reply)`, true);
      await actions.refreshAgents();
    } catch (ex) {
      flash(`Could not switch the model: ${errText(ex)}`);
    }
    render();
  });
  // The providers are asked again when the agent list is reloaded (setup
  // saved, config changed), not on every switch of agent: asking looks for
  // local servers.
  let seen = store.agents;
  store.subscribe("agents", () => {
    if (store.agents === seen) return render();
    seen = store.agents;
    void load();
  });
  store.subscribe("sessions", render);
  void load();
}
