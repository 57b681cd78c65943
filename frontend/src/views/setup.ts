// The setup panel: the model provider (a found local server, any
// OpenAI-compatible server, or OpenAI with a key), opened on first run, when
// the service says no provider is configured, or by the Provider button.
import type { Actions } from "../actions";
import { errText, type ProvidersInfo } from "../bridge";
import { firstRunIntro, keyStorageNote } from "../about";
import { discoveredList } from "../panels";
import { h } from "../view";

export function mountSetup(actions: Actions, flash: (text: string, good?: boolean) => void): void {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const panel = $("setup");
  let openedByUser = false;
  let firstRender = true; // the first look at the providers picks the tab

  const tab = (name: string) => {
    for (const b of Array.from(panel.querySelectorAll<HTMLButtonElement>("[data-tab]"))) {
      b.classList.toggle("primary", b.dataset.tab === name);
      b.setAttribute("aria-selected", String(b.dataset.tab === name));
    }
    $("setup-compatible").hidden = name !== "compatible";
    $("setup-openai").hidden = name !== "openai";
  };

  const show = (message: string, byUser = false) => {
    openedByUser = byUser;
    const wasHidden = panel.hidden;
    panel.hidden = false;
    $("setup-message").textContent = message;
    if (wasHidden) void load();
  };

  const load = async () => {
    const box = $("setup-discovered");
    box.replaceChildren(h("p", { class: "hint" }, "Looking for local model servers…"));
    try {
      render(await actions.api().Providers());
    } catch (ex) {
      box.replaceChildren(h("div", { class: "form-error" }, errText(ex)));
    }
  };

  const render = (p: ProvidersInfo) => {
    document.dispatchEvent(new CustomEvent("jarvis:providers", { detail: p })); // the memory offer (memory.ts)
    $("setup-discovered").replaceChildren(discoveredList(p, (baseUrl, model) => {
      $<HTMLInputElement>("setup-baseurl").value = baseUrl;
      $<HTMLInputElement>("setup-model").value = model;
      void save("openai-compatible");
    }));
    const cur = p.providers?.["openai-compatible"];
    const base = $<HTMLInputElement>("setup-baseurl");
    if (cur?.baseUrl && !base.value) base.value = cur.baseUrl;
    const model = $<HTMLInputElement>("setup-model");
    if (cur?.model && !model.value) model.value = cur.model;
    const note = keyStorageNote(p);
    $("setup-key-hint").textContent = note.text;
    $("setup-key-hint").classList.toggle("warn", note.warn);
    $("setup-intro").hidden = p.configured;
    // A new user reads the explanation; the service's own words are one click away.
    $<HTMLDetailsElement>("setup-details").open = p.configured;
    $("setup-intro").textContent = firstRunIntro(p);
    if (firstRender && !p.configured && !p.discovered?.length && !openedByUser) tab("openai"); // nothing local: ask for a key
    firstRender = false;
    if (p.configured) $("setup-message").textContent = `Configured: ${p.defaultProvider}. You can switch provider here.`;
    else if (p.problem && !$("setup-message").textContent) $("setup-message").textContent = p.problem;
  };

  // What a form asks for: the same fields for Save and for Test connection.
  const formRequest = (provider: string) =>
    provider === "openai"
      ? { provider, apiKey: $<HTMLInputElement>("setup-apikey").value, model: $<HTMLInputElement>("setup-openai-model").value }
      : { provider, baseUrl: $<HTMLInputElement>("setup-baseurl").value, model: $<HTMLInputElement>("setup-model").value };

  // Test connection: the service asks the server for its models and says
  // what it found; nothing is saved, and the key stays in its field.
  const test = async (provider: string, button: HTMLButtonElement) => {
    const out = $("setup-test-result");
    out.hidden = false;
    out.className = "setup-test-result";
    out.textContent = "Testing…";
    button.setAttribute("disabled", "");
    try {
      const r = await actions.api().TestProvider(formRequest(provider));
      out.textContent = r.message;
      out.classList.add(r.ok ? "good" : "warn");
    } catch (ex) {
      out.textContent = errText(ex);
      out.classList.add("warn");
    } finally {
      button.removeAttribute("disabled");
    }
  };

  const save = async (provider: string) => {
    const err = $("setup-error");
    err.textContent = "";
    const key = $<HTMLInputElement>("setup-apikey");
    const req = formRequest(provider);
    const buttons = Array.from(panel.querySelectorAll<HTMLButtonElement>("button"));
    buttons.forEach((b) => b.setAttribute("disabled", ""));
    try {
      const p = await actions.api().SetProvider(req);
      key.value = ""; // never kept in the page
      if (!p.configured) {
        err.textContent = p.problem || "Saved, but the agent still cannot chat.";
        return;
      }
      panel.hidden = true;
      openedByUser = false;
      const note = keyStorageNote(p);
      if (req.provider === "openai" && note.warn) flash(`Provider saved, but: ${note.text}`);
      else flash(`Provider saved: ${p.defaultProvider}${req.model ? ` · ${req.model}` : ""}`, true);
      await actions.refreshAgents();
    } catch (ex) {
      key.value = "";
      err.textContent = errText(ex);
    } finally {
      buttons.forEach((b) => b.removeAttribute("disabled"));
    }
  };

  actions.store.subscribe("setup", ({ message }) => {
    if (message) show(message);
    else if (!openedByUser) panel.hidden = true;
  });
  $("setup-close").addEventListener("click", () => {
    panel.hidden = true;
    openedByUser = false;
  });
  $("setup-rescan").addEventListener("click", () => void load());
  $("open-setup").addEventListener("click", () => {
    if (panel.hidden) show("", true);
    else panel.hidden = true;
  });
  for (const b of Array.from(panel.querySelectorAll<HTMLButtonElement>("[data-tab]"))) {
    b.addEventListener("click", () => tab(b.dataset.tab!));
  }
  tab("compatible");
  for (const id of ["setup-compatible", "setup-openai"]) {
    const b = $(id).querySelector<HTMLButtonElement>('[data-action="test-connection"]')!;
    b.addEventListener("click", () => void test($(id).dataset.provider!, b));
    $(id).addEventListener("submit", (e) => {
      e.preventDefault();
      void save((e.currentTarget as HTMLElement).dataset.provider!);
    });
  }
}
