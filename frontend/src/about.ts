// The About view (version, commit, where data and config live, start at
// login) and the plain-word texts of the first-run setup.
import { api, errText, on, openExternal, type About, type ProvidersInfo } from "./bridge";
import { copyText, h } from "./view";

/** What a new user reads above the setup form when no provider is configured. */
export function firstRunIntro(p: ProvidersInfo): string {
  const found = p.discovered?.length
    ? `Good news: ${p.discovered.map((s) => s.name).join(" and ")} is running on this computer — pick one of its models below and you can start.`
    : "No model server is running on this computer right now (Jarvis looked for Ollama, LM Studio and llama.cpp on their usual ports). " +
      "You can start one and press “Look again” on the “Local or OpenAI-compatible server” tab, or paste an OpenAI API key below.";
  return (
    "Welcome to Jarvis. To answer you, Jarvis needs a language model: either one running on this computer, " +
    "which keeps everything you type here, or OpenAI's service with your own API key. " +
    found
  );
}

/** Where a stored key lives, in words; a warning when it is the less protected file. */
export function keyStorageNote(p: ProvidersInfo): { text: string; warn: boolean } {
  if (p.keyStorage === "file")
    return {
      text:
        `No OS keyring is available on this computer, so the key is kept in ${p.secretsFile || "a file in the config folder"}. ` +
        "Only your user can read that file, but any program running as you can: it is less protected than a keyring.",
      warn: true,
    };
  if (p.keyStorage === "env") return { text: "The key comes from the JARVIS_SECRET_OPENAI environment variable, which wins over any stored key.", warn: false };
  if (p.openaiKeyStored) return { text: "A key is already stored in your OS keyring. Enter a new one to replace it; it is never shown.", warn: false };
  return {
    text: "The key is stored in your OS keyring and is not shown again. Without a keyring it goes to a file only you can read, and Jarvis will warn you.",
    warn: false,
  };
}

function row(label: string, value: string): HTMLElement {
  return h("div", { class: "about-row" }, h("span", { class: "hint" }, label), h("span", { class: "mono", "data-about": label }, value));
}

/** The licence, the links and "Copy diagnostics" of the About view. */
export function aboutLinks(a: About, flash: (msg: string, good?: boolean) => void): HTMLElement[] {
  const link = (label: string, url: string | undefined, id: string) => {
    const el = h("a", { href: url ?? "#", id, class: "about-link" }, label);
    el.addEventListener("click", (e) => {
      e.preventDefault();
      if (url) openExternal(url);
    });
    return el;
  };
  const copy = h("button", { class: "small", type: "button", id: "about-diagnostics" }, "Copy diagnostics");
  copy.addEventListener("click", async () => {
    try {
      await copyText(await api().Diagnostics());
      flash("Diagnostics copied: version, system, sandbox, whether a model is set up. No key, token or file of yours is in them.", true);
    } catch (ex) {
      flash(errText(ex));
    }
  });
  return [
    h("p", { class: "about-license", "data-about": "License" }, `Free software under the ${a.license || "MIT"} licence.`),
    h("p", { class: "about-links" }, link("Project page", a.homepage, "about-homepage"), " · ",
      link("Licence", a.homepage ? `${a.homepage}/blob/main/LICENSE` : undefined, "about-license-link"), " · ",
      link("Report a problem", a.issues, "about-issues")),
    h("div", { class: "about-diagnostics" }, copy, h("span", { class: "hint" }, " for a problem report")),
  ];
}

async function showAbout(flash: (msg: string, good?: boolean) => void): Promise<void> {
  const box = document.getElementById("about")!;
  if (!box.hidden) {
    box.hidden = true;
    return;
  }
  let a: About;
  try {
    a = await api().About();
  } catch (ex) {
    flash(errText(ex));
    return;
  }
  const auto = h("input", { type: "checkbox", id: "about-autostart" }) as HTMLInputElement;
  auto.checked = a.autostart;
  auto.disabled = !a.autostartSupported;
  auto.addEventListener("change", async () => {
    try {
      const b = await api().SetAutostart(auto.checked);
      auto.checked = b.autostart;
      flash(b.autostart ? `Jarvis will start when you log in (${b.autostartFile}).` : "Jarvis will no longer start at login.", true);
    } catch (ex) {
      auto.checked = !auto.checked;
      flash(errText(ex));
    }
  });
  const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "✕");
  close.addEventListener("click", () => (box.hidden = true));
  box.replaceChildren(
    h("div", { class: "setup-head" }, h("h2", {}, `About ${a.product}`), close),
    row("Version", a.version),
    row("Commit", a.commit),
    row("Data folder", a.dataDir),
    row("Config file", a.configPath),
    row("Keys without a keyring", a.secretsFile),
    h("label", { class: "about-autostart" }, auto, a.autostartSupported ? " Start Jarvis when I log in" : " Starting at login is available on Linux desktops only"),
    ...aboutLinks(a, flash),
  );
  box.hidden = false;
}

/** Wires the About button and the notice of a second launch. */
export function wireAbout(flash: (msg: string, good?: boolean) => void): void {
  document.getElementById("open-about")!.addEventListener("click", () => void showAbout(flash));
  on("app:second-instance", (d: any) => {
    if (Array.isArray(d?.args) && d.args[0] === "undo") return; // `jarvis undo` telling the window (undo.ts)
    flash("Jarvis is already open: this is its window.", true);
  });
}
