// The permission prompt dialog: the first prompt of the gate's queue, in
// plain words (what it does to which file, program or address, the full
// path in the workspace, what it will write), one risk badge, the arguments
// the user may edit, and the choices. It cannot be approved by accident:
// for a risky or destructive call the focus starts on Deny, and Enter
// answers only the button that has the focus. "Always allow" saves the rule
// shown under the buttons, the call's own target unless the user widens it.
import type { Actions } from "../actions";
import { argumentsText, askReason, contentPreview, decisiveList, diffPreview, promptSentence, promptTitle, requestedLine, riskWord, riskyPrompt, ruleText, untrustedWarning, workspacePath } from "../prompt";
import { h, sessionTitle } from "../view";

export function mountPrompt(actions: Actions): void {
  const store = actions.store;
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const dlg = $("prompt");
  const args = $<HTMLTextAreaElement>("prompt-args");
  const scopeBox = $("prompt-scope");
  const why = $<HTMLInputElement>("prompt-why");
  let shown = "";
  let scope = 0;

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
    scope = 0;
    dlg.dataset.prompt = p.id;
    const s = p.session_id ? store.session(p.session_id) : undefined;
    $("prompt-title").textContent = promptTitle(p);
    // The risk word of the tool card (riskWord), and "deletes" for a delete.
    $("prompt-meta").replaceChildren(
      h("span", { class: `badge risk-${p.risk}`, "data-risk": p.risk }, riskWord(p.risk)),
      ...(p.destructive ? [" ", h("span", { class: "badge risk-destructive", "data-risk": "destructive" }, "deletes")] : []),
      h("span", {}, ` requested in ${s ? sessionTitle(s) : "a conversation"}`),
    );
    const where = workspacePath(p, store.workspace);
    $("prompt-where").hidden = !where;
    $("prompt-where").textContent = where ? `Full path: ${where} (your workspace is ${store.workspace})` : "";
    const warning = untrustedWarning(p);
    $("prompt-untrusted").hidden = !warning;
    $("prompt-untrusted").replaceChildren(...(warning ? [warning] : []));
    $("prompt-decisive").replaceChildren(decisiveList(p));
    // An overwrite shows what changes; a new file, its content.
    const diff = diffPreview(p);
    const preview = diff ? { label: diff.label, block: diff.block } : contentPreview(p);
    $("prompt-preview").hidden = !preview;
    $("prompt-preview").replaceChildren(...(preview ? [h("div", { class: "label" }, preview.label), "block" in preview ? preview.block : h("pre", { class: "prompt-preview-text" }, preview.text)] : []));
    // With a preview, the JSON is one click away instead of first.
    $<HTMLDetailsElement>("prompt-args-box").open = !preview;
    $("prompt-requested").textContent = requestedLine(p);
    $("prompt-desc").textContent = promptSentence(p);
    $("prompt-reason").textContent = askReason(p);
    $("prompt-model-reason").textContent = p.model_reason ? `The agent says: ${p.model_reason}` : "";
    args.value = argumentsText(p);
    args.dataset.original = args.value;
    $("prompt-error").textContent = "";
    why.value = "";
    for (const b of Array.from(dlg.querySelectorAll<HTMLButtonElement>("button[data-choice]"))) {
      b.hidden = !p.choices.includes(b.dataset.choice!);
    }
    renderScope();
    const more = store.prompts.length > 1 ? ` · ${store.prompts.length - 1} more waiting` : "";
    const deadline = Date.parse(p.deadline);
    const tick = () => {
      if (shown !== p.id) return;
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      $("prompt-timer").textContent = `Denied automatically in ${left} s${more}`;
      if (left > 0) setTimeout(tick, 1000);
    };
    tick();
    // For a risky call no approval looks like the default either.
    dlg.querySelector("button[data-choice=once]")!.classList.toggle("primary", !riskyPrompt(p));
    const first = riskyPrompt(p) ? "deny" : "once";
    (dlg.querySelector(`button[data-choice=${first}]`) as HTMLButtonElement).focus();
  };

  // What "Always allow" saves, before it is saved, and the wider scopes.
  const renderScope = () => {
    const p = store.prompts[0];
    const scopes = p?.choices.includes("always") ? p.scopes ?? [] : [];
    scopeBox.hidden = scopes.length === 0;
    if (!scopes.length) return scopeBox.replaceChildren();
    const sel = h("select", { "aria-label": "What Always allow covers" }) as HTMLSelectElement;
    scopes.forEach((sc, i) => {
      const o = h("option", { value: String(i) }, sc.label) as HTMLOptionElement;
      o.selected = i === scope;
      sel.append(o);
    });
    sel.addEventListener("change", () => {
      scope = Number(sel.value);
      rule.textContent = `Rule: ${ruleText(scopes[scope].rule)}`;
      scopeBox.classList.toggle("wide", scope > 0);
    });
    const rule = h("div", { class: "hint mono" }, `Rule: ${ruleText(scopes[scope].rule)}`);
    scopeBox.classList.toggle("wide", scope > 0);
    scopeBox.replaceChildren(h("label", {}, "“Always allow” saves a rule for ", sel), rule, h("div", { class: "hint" }, "You can see, change and revoke it under Permissions."));
  };

  const answer = async (choice: string) => {
    const edited = args.value !== args.dataset.original ? args.value : "";
    const p = store.prompts[0];
    const s = p?.session_id ? store.session(p.session_id) : undefined;
    $("prompt-error").textContent = await actions.answerPrompt(choice, edited, scope, choice === "deny" ? why.value.trim() : "", s ? sessionTitle(s) : "");
  };
  for (const b of Array.from(dlg.querySelectorAll<HTMLButtonElement>("button[data-choice]"))) {
    b.addEventListener("click", () => void answer(b.dataset.choice!));
  }
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") void answer("deny");
    if (e.key !== "Enter") return;
    // Enter answers only the button that has the focus (Deny, unless the
    // user moved to another on purpose); elsewhere it does nothing.
    const t = e.target as HTMLElement;
    if (t === why) {
      // Enter in "Tell the agent why" sends the denial with it.
      e.preventDefault();
      void answer("deny");
      return;
    }
    if (t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t.tagName === "SUMMARY") return;
    e.preventDefault();
    if (t instanceof HTMLButtonElement && t.dataset.choice) void answer(t.dataset.choice);
  });
  store.subscribe("prompts", render);
}
