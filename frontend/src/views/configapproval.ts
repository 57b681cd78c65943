// The dialog for a config file changed outside Jarvis: what it would start,
// where it would connect and which secrets it would send, and Apply, which
// approves exactly the content shown (the service refuses it when the file
// changed since) or Not now (the configuration approved before stays).
import type { Actions } from "../actions";
import type { PendingConfig } from "../bridge";
import { h } from "../view";

export function mountConfigApproval(actions: Actions): void {
  const where = h("p", { class: "hint", id: "config-approval-path" });
  const lines = h("ul", { id: "config-approval-lines" });
  const status = h("div", { class: "form-error", role: "alert", id: "config-approval-error" });
  const apply = h("button", { class: "small primary", type: "button", "data-action": "approve-config" }, "Apply") as HTMLButtonElement;
  const later = h("button", { class: "small", type: "button", "data-action": "not-now" }, "Not now");
  const dlg = h("div", { id: "config-approval", class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "config-approval-title", hidden: "" },
    h("div", { class: "modal-box" },
      h("h2", { id: "config-approval-title" }, "Apply the changed configuration?"),
      where,
      h("p", {}, "This file was changed outside Jarvis, so Jarvis keeps using the configuration you approved before. Applied, it would:"),
      lines,
      h("p", { class: "hint" }, "Apply it only if you made this change."),
      status,
      h("div", { class: "permission-buttons" }, later, apply),
    ),
  );
  document.body.append(dlg);
  let shown: PendingConfig | undefined;
  actions.store.subscribe("configApproval", (p) => {
    shown = p;
    where.textContent = p.path;
    lines.replaceChildren(...p.lines.map((l) => h("li", {}, l)));
    status.textContent = "";
    dlg.hidden = false;
    later.focus(); // Enter must not apply it
  });
  apply.addEventListener("click", async () => {
    if (!shown) return;
    apply.disabled = true;
    const err = await actions.approveConfig(shown.hash);
    apply.disabled = false;
    status.textContent = err;
    if (!err) dlg.hidden = true;
  });
  later.addEventListener("click", () => (dlg.hidden = true));
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") dlg.hidden = true;
  });
}
