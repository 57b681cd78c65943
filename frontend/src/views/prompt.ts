// The permission prompt dialog: the first prompt of the gate's queue, its
// risk, what it acts on, the arguments the user may edit, and the choices.
import type { Actions } from "../actions";
import { argumentsText, decisiveList, requestedLine } from "../prompt";
import { h, sessionTitle } from "../view";

export function mountPrompt(actions: Actions): void {
  const store = actions.store;
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const dlg = $("prompt");
  const args = $<HTMLTextAreaElement>("prompt-args");
  let shown = "";

  const render = () => {
    const p = store.prompts[0];
    if (!p) {
      dlg.hidden = true;
      shown = "";
      return;
    }
    dlg.hidden = false;
    if (shown === p.id) return; // keep the user's edits
    shown = p.id;
    dlg.dataset.prompt = p.id;
    const s = p.session_id ? store.session(p.session_id) : undefined;
    $("prompt-title").textContent = `Allow “${p.tool}”?`;
    $("prompt-meta").replaceChildren(
      h("span", { class: `badge risk-${p.risk}` }, p.risk + (p.destructive ? " · destructive" : "")),
      h("span", {}, ` requested in ${s ? sessionTitle(s) : p.session_id ?? "a session"}`),
    );
    $("prompt-decisive").replaceChildren(decisiveList(p));
    $("prompt-requested").textContent = requestedLine(p);
    $("prompt-desc").textContent = p.description ?? "";
    $("prompt-reason").textContent = p.reason ?? "";
    $("prompt-model-reason").textContent = p.model_reason ? `The agent says: ${p.model_reason}` : "";
    args.value = argumentsText(p);
    args.dataset.original = args.value;
    $("prompt-error").textContent = "";
    for (const b of Array.from(dlg.querySelectorAll<HTMLButtonElement>("button[data-choice]"))) {
      b.hidden = !p.choices.includes(b.dataset.choice!);
    }
    const more = store.prompts.length > 1 ? ` · ${store.prompts.length - 1} more waiting` : "";
    const deadline = Date.parse(p.deadline);
    const tick = () => {
      if (shown !== p.id) return;
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      $("prompt-timer").textContent = `Denied automatically in ${left} s${more}`;
      if (left > 0) setTimeout(tick, 1000);
    };
    tick();
    (dlg.querySelector("button[data-choice=once]") as HTMLButtonElement).focus();
  };

  const answer = async (choice: string) => {
    const edited = args.value !== args.dataset.original ? args.value : "";
    $("prompt-error").textContent = await actions.answerPrompt(choice, edited);
  };
  for (const b of Array.from(dlg.querySelectorAll<HTMLButtonElement>("button[data-choice]"))) {
    b.addEventListener("click", () => void answer(b.dataset.choice!));
  }
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") void answer("deny");
  });
  store.subscribe("prompts", render);
}
