// The Permissions page: every rule of the gate's policy in plain words (the
// "always allow" rules saved from prompts and any written by hand), the
// workspace they apply to, and per rule Edit and Revoke; a form that adds a
// command rule (program and argument prefix, "npm run *"); the read-only
// commands that run with no prompt; and the sandbox programs run in, each
// protection held or missing on this system. It builds its own dialog and
// adds a "Permissions" button to the header.
import type { Actions } from "../actions";
import { ruleText, type PolicyRule } from "../prompt";
import { h } from "../view";

export function mountPermissions(actions: Actions): void {
  const store = actions.store;
  const list = h("div", { id: "permissions-list", class: "permissions-list" });
  const where = h("p", { class: "hint", id: "permissions-workspace" });
  const status = h("div", { class: "form-error", role: "alert", id: "permissions-error" });
  const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "✕");
  const defaults = h("p", { class: "hint", id: "permissions-defaults" });
  const sandbox = h("ul", { class: "permissions-sandbox", id: "permissions-sandbox" });
  function addForm(): HTMLElement {
    const action = h("select", { "aria-label": "Action" }) as HTMLSelectElement;
    for (const [v, label] of [["allow", "Allow without asking"], ["ask", "Always ask"], ["deny", "Never allow"]]) action.append(h("option", { value: v }, label));
    const command = h("input", { type: "text", "aria-label": "Command", spellcheck: "false", placeholder: "npm run *" }) as HTMLInputElement;
    const network = h("input", { type: "checkbox", "aria-label": "With network" }) as HTMLInputElement;
    const here = h("input", { type: "checkbox", "aria-label": "Only in this workspace", checked: "" }) as HTMLInputElement;
    const form = h("form", { class: "permission-add", id: "permissions-add" },
      h("label", {}, "Action ", action),
      h("label", {}, "Command (program, then arguments; a last * stands for any further arguments) ", command),
      h("label", {}, network, " with network"),
      h("label", {}, here, " only in this workspace"),
      h("div", { class: "permission-buttons" }, h("button", { class: "small primary", type: "submit" }, "Add command rule")),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const next: PolicyRule = { tool: "run_command", command: command.value.trim(), action: action.value };
      if (network.checked) next.network = true;
      if (here.checked && store.workspace) next.workspace = store.workspace;
      const err = await actions.addRule(next);
      status.textContent = err;
      if (!err) command.value = "";
    });
    return form;
  }
  const dlg = h("div", { id: "permissions", class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "permissions-title", hidden: "" },
    h("div", { class: "modal-box wide" },
      h("div", { class: "setup-head" }, h("h2", { id: "permissions-title" }, "Permissions"), close),
      where,
      h("p", { class: "hint" }, "Calls these rules allow run without asking; calls they deny never run. Everything else asks you first. Deny wins over ask, ask over allow."),
      status,
      list,
      addForm(),
      h("h3", {}, "Commands that run with no prompt"),
      defaults,
      h("h3", {}, "The sandbox programs run in"),
      sandbox,
    ),
  );
  document.body.append(dlg);
  // The button is lazy.ts's (the page loads on its first click); made here when missing.
  let open = document.getElementById("open-permissions");
  if (!open) document.getElementById("open-audit")!.after((open = h("button", { id: "open-permissions", class: "small", type: "button", title: "Rules saved with “Always allow”: see, edit, revoke" }, "Permissions")));
  let editing = -1;

  const render = () => {
    where.textContent = store.workspace ? `File rules are relative to your workspace: ${store.workspace}` : "";
    defaults.textContent = store.defaultCommands.length
      ? `${store.defaultCommands.map((r) => r.command).join(", ")} — only when every argument stays in the working folder (no absolute path, no "..", no hidden file), without network; anything else asks.`
      : "";
    sandbox.replaceChildren(...store.sandbox.map((p) => h("li", { class: p.held ? "held" : "missing" }, `${p.held ? "✓" : "✗ missing:"} ${p.name} — ${p.by}`)));
    if (!store.rules.length) {
      list.replaceChildren(h("p", { class: "empty" }, "No rules yet. When you choose “Always allow” on a prompt, its rule appears here."));
      return;
    }
    list.replaceChildren(...store.rules.map((r, i) => (i === editing ? editor(r, i) : row(r, i))));
  };

  const row = (r: PolicyRule, i: number) => {
    const edit = h("button", { class: "small", type: "button", "data-action": "edit" }, "Edit");
    edit.addEventListener("click", () => {
      editing = i;
      render();
    });
    const revoke = h("button", { class: "small danger", type: "button", "data-action": "revoke" }, "Revoke");
    revoke.addEventListener("click", async () => {
      status.textContent = await actions.revokeRule(i);
    });
    return h("div", { class: `permission-row action-${r.action}`, "data-index": String(i) },
      h("div", {}, h("span", { class: `badge rule-${r.action}` }, r.action), " ", h("span", { class: "permission-text" }, ruleText(r))),
      h("div", { class: "permission-buttons" }, edit, revoke),
    );
  };

  const editor = (r: PolicyRule, i: number) => {
    const action = h("select", { "aria-label": "Action" }) as HTMLSelectElement;
    for (const a of ["allow", "ask", "deny"]) {
      const o = h("option", { value: a }, { allow: "Allow without asking", ask: "Always ask", deny: "Never allow" }[a]!) as HTMLOptionElement;
      o.selected = a === r.action;
      action.append(o);
    }
    const tool = h("input", { type: "text", value: r.tool, "aria-label": "Tool", spellcheck: "false" }) as HTMLInputElement;
    const command = h("input", { type: "text", value: r.command ?? "", "aria-label": "Command", spellcheck: "false", placeholder: "git diff *" }) as HTMLInputElement;
    const args = h("textarea", { rows: "3", "aria-label": "Arguments", spellcheck: "false", placeholder: "path = notes/*" }) as HTMLTextAreaElement;
    args.value = Object.entries(r.args ?? {}).map(([k, v]) => `${k} = ${v}`).join("\n");
    const untrusted = h("input", { type: "checkbox", "aria-label": "Also after untrusted content" }) as HTMLInputElement;
    untrusted.checked = !!r.untrusted;
    const save = h("button", { class: "small primary", type: "submit" }, "Save");
    const cancel = h("button", { class: "small", type: "button" }, "Cancel");
    cancel.addEventListener("click", () => {
      editing = -1;
      render();
    });
    const form = h("form", { class: "permission-edit", "data-index": String(i) },
      h("label", {}, "Action ", action), h("label", {}, "Tool ", tool),
      h("label", {}, "Command (run_command only; empty: any) ", command),
      h("label", {}, "Arguments, one “name = pattern” a line (* matches anything, / included)", args),
      h("label", { class: "permission-untrusted" }, untrusted,
        " Also after the conversation has read content someone else wrote (a web page, a command's output, another agent's reply). Without it, a call that would send data out asks first."),
      h("div", { class: "permission-buttons" }, save, cancel),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const next: PolicyRule = { tool: tool.value.trim(), action: action.value };
      if (untrusted.checked && action.value === "allow") next.untrusted = true;
      if (r.note) next.note = r.note; // a default rule keeps what its prompt says
      if (command.value.trim()) {
        next.command = command.value.trim();
        if (r.network) next.network = true;
        if (r.workspace) next.workspace = r.workspace;
      }
      const parsed: Record<string, string> = {};
      for (const line of args.value.split("\n")) {
        if (!line.trim()) continue;
        const m = line.match(/^\s*([^=\s]+)\s*=\s*(.*?)\s*$/);
        if (!m) {
          status.textContent = `Not “name = pattern”: ${line}`;
          return;
        }
        parsed[m[1]] = m[2];
      }
      if (Object.keys(parsed).length) next.args = parsed;
      const err = await actions.editRule(i, next);
      status.textContent = err;
      if (!err) editing = -1;
      render();
    });
    return form;
  };

  open.addEventListener("click", async () => {
    editing = -1;
    status.textContent = await actions.loadRules();
    dlg.hidden = false;
  });
  close.addEventListener("click", () => (dlg.hidden = true));
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") dlg.hidden = true;
  });
  store.subscribe("rules", render);
  render();
}
