// The Permissions dialog: every rule of the gate's policy in plain words (the
// "always allow" rules saved from prompts and any written by hand) with where
// each came from (which chat, when), the workspace they apply to, and per
// rule Edit and Revoke (with Undo); the current conversation's "allow for
// this session" grants; a form that adds a rule for any known tool (MCP
// tools included) or a command rule (program and argument prefix, "npm run
// *"); the read-only commands that run with no prompt; and the sandbox
// programs run in, each protection held or missing on this system. It is a
// real dialog (modalDialog: Esc closes, the focus stays inside and goes back
// to the opener), and adds a "Permissions" button to the header.
import type { Actions } from "../actions";
import { ruleText, toolLabel, type PolicyRule } from "../prompt";
import { h, modalDialog, sessionTitle } from "../view";
import type { Store } from "../store";

/** Where a rule came from, in words: the chat and time "Always allow" saved it, the Permissions page, or neither. */
export function originText(r: PolicyRule, store: Pick<Store, "session">): string {
  const o = r.origin;
  if (!o) return r.note ? "Built in: credential files always ask" : "Added by hand, or before Jarvis recorded where rules come from";
  const at = new Date(o.at);
  const when = isNaN(at.getTime()) ? "" : ` · ${at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}`;
  if (o.kind === "prompt") {
    const s = o.session_id ? store.session(o.session_id) : undefined;
    const chat = s ? sessionTitle(s) : o.chat || "a conversation since deleted";
    return `Saved with “Always allow” in “${chat}”${when}`;
  }
  return `Added on this page${when}`;
}

export function mountPermissions(actions: Actions): void {
  const store = actions.store;
  const list = h("div", { id: "permissions-list", class: "permissions-list" });
  const where = h("p", { class: "hint", id: "permissions-workspace" });
  const status = h("div", { class: "form-error", role: "alert", id: "permissions-error" });
  const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "✕");
  const defaults = h("p", { class: "hint", id: "permissions-defaults" });
  const sandbox = h("ul", { class: "permissions-sandbox", id: "permissions-sandbox" });
  const toolPick = h("select", { "aria-label": "Tool" }) as HTMLSelectElement;
  function addForm(): HTMLElement {
    const action = h("select", { "aria-label": "Action" }) as HTMLSelectElement;
    for (const [v, label] of [["allow", "Allow without asking"], ["ask", "Always ask"], ["deny", "Never allow"]]) action.append(h("option", { value: v }, label));
    const command = h("input", { type: "text", "aria-label": "Command", spellcheck: "false", placeholder: "npm run *" }) as HTMLInputElement;
    const network = h("input", { type: "checkbox", "aria-label": "With network" }) as HTMLInputElement;
    const here = h("input", { type: "checkbox", "aria-label": "Only in this workspace", checked: "" }) as HTMLInputElement;
    const args = h("textarea", { rows: "2", "aria-label": "Arguments", spellcheck: "false", placeholder: "path = notes/*" }) as HTMLTextAreaElement;
    const forCommand = h("div", { class: "permission-command" },
      h("label", {}, "Command (program, then arguments; a last * stands for any further arguments) ", command),
      h("label", {}, network, " with network"),
      h("label", {}, here, " only in this workspace"),
    );
    const forTool = h("label", { class: "permission-args", hidden: "" }, "Only when (one “name = pattern” a line, * matches anything; empty: any call) ", args);
    toolPick.addEventListener("change", () => {
      forCommand.hidden = toolPick.value !== "run_command";
      forTool.hidden = toolPick.value === "run_command";
    });
    const form = h("form", { class: "permission-add", id: "permissions-add" },
      h("h3", {}, "Add a rule"),
      h("label", {}, "Action ", action),
      h("label", {}, "Tool ", toolPick),
      forCommand, forTool,
      h("div", { class: "permission-buttons" }, h("button", { class: "small primary", type: "submit" }, "Add rule")),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const tool = toolPick.value || "run_command";
      let next: PolicyRule;
      if (tool === "run_command") {
        next = { tool, command: command.value.trim(), action: action.value };
        if (network.checked) next.network = true;
        if (here.checked && store.workspace) next.workspace = store.workspace;
      } else {
        next = { tool, action: action.value };
        const parsed = parseArgs(args.value);
        if (typeof parsed === "string") {
          status.textContent = parsed;
          return;
        }
        if (Object.keys(parsed).length) next.args = parsed;
      }
      const err = await actions.addRule(next);
      status.textContent = err;
      if (!err) {
        command.value = "";
        args.value = "";
      }
    });
    return form;
  }
  // The tool picker: programs first, then the tools by their names for people.
  const renderTools = () => {
    const was = toolPick.value || "run_command";
    const known = store.knownTools.length ? store.knownTools : [{ name: "run_command" }];
    const sorted = [...known].sort((a, b) => (a.name === "run_command" ? -1 : b.name === "run_command" ? 1 : toolLabel(a.name, a.title).localeCompare(toolLabel(b.name, b.title))));
    toolPick.replaceChildren(...sorted.map((t) => {
      const o = h("option", { value: t.name }, t.name === "run_command" ? "Run a program (a command rule)" : toolLabel(t.name, t.title)) as HTMLOptionElement;
      o.selected = t.name === was;
      return o;
    }));
  };
  const grants = h("ul", { class: "permissions-grants", id: "permissions-grants" });
  const toast = h("div", { class: "permissions-toast", id: "permissions-toast", role: "status", hidden: "" });
  const dlg = h("div", { id: "permissions", class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "permissions-title", hidden: "" },
    h("div", { class: "modal-box wide" },
      h("div", { class: "setup-head" }, h("h2", { id: "permissions-title" }, "Permissions"), close),
      where,
      h("p", { class: "hint" }, "Calls these rules allow run without asking; calls they deny never run. Everything else asks you first. Deny wins over ask, ask over allow."),
      status,
      toast,
      list,
      h("h3", {}, "Allowed for this conversation"),
      h("p", { class: "hint" }, "“Allow for this session” grants: they end when Jarvis closes."),
      grants,
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
  const modal = modalDialog(dlg, () => hide());
  const hide = () => {
    dlg.hidden = true;
    modal.restore();
  };

  const render = () => {
    where.textContent = store.workspace ? `File rules are relative to your workspace: ${store.workspace}` : "";
    defaults.textContent = store.defaultCommands.length
      ? `${store.defaultCommands.map((r) => r.command).join(", ")} — only when every argument stays in the working folder (no absolute path, no "..", no hidden file), without network; anything else asks.`
      : "";
    sandbox.replaceChildren(...store.sandbox.map((p) => h("li", { class: p.held ? "held" : "missing" }, `${p.held ? "✓" : "✗ missing:"} ${p.name} — ${p.by}`)));
    const mine = store.grants.filter((g) => g.session_id === store.sessionId);
    grants.replaceChildren(...(mine.length ? mine.map((g) => h("li", { class: "permission-grant" }, ruleText(g.rule))) : [h("li", { class: "empty" }, "None: nothing was allowed for this conversation only.")]));
    renderTools();
    if (!store.rules.length) {
      list.replaceChildren(h("p", { class: "empty" }, "No rules yet. When you choose “Always allow” on a prompt, its rule appears here."));
      return;
    }
    // Your rules first; the built-in credential rules folded under them.
    const shown = (i: number) => (i === editing ? editor(store.rules[i], i) : row(store.rules[i], i));
    const all = store.rules.map((_, i) => i);
    const builtIn = all.filter((i) => builtInRule(store.rules[i]));
    const yours = all.filter((i) => !builtInRule(store.rules[i]));
    const folded = h("details", { class: "permissions-builtin" }, h("summary", {}, `Built in: credential files always ask (${builtIn.length} rules)`), ...builtIn.map(shown));
    if (builtIn.includes(editing)) (folded as HTMLDetailsElement).open = true;
    list.replaceChildren(...(yours.length ? yours.map(shown) : [h("p", { class: "empty" }, "No rules of yours yet. When you choose “Always allow” on a prompt, its rule appears here.")]),
      ...(builtIn.length ? [folded] : []));
  };

  const row = (r: PolicyRule, i: number) => {
    const edit = h("button", { class: "small", type: "button", "data-action": "edit" }, "Edit");
    edit.addEventListener("click", () => {
      editing = i;
      render();
    });
    const revoke = h("button", { class: "small danger", type: "button", "data-action": "revoke" }, "Revoke");
    revoke.addEventListener("click", async () => {
      const err = await actions.revokeRule(i);
      status.textContent = err;
      if (!err) revoked(r);
    });
    return h("div", { class: `permission-row action-${r.action}`, "data-index": String(i) },
      h("div", {}, h("span", { class: `badge rule-${r.action}` }, r.action), " ", h("span", { class: "permission-text" }, ruleText(r)),
        h("div", { class: "hint permission-origin" }, originText(r, store))),
      h("div", { class: "permission-buttons" }, edit, revoke),
    );
  };

  // A revoked rule can be put back, with its origin, until the next revoke:
  // an Undo inside the dialog (the window's notice line is behind it).
  const revoked = (r: PolicyRule) => {
    const undo = h("button", { class: "small", type: "button", "data-action": "undo" }, "Undo");
    undo.addEventListener("click", async () => {
      const err = await actions.addRule(r);
      status.textContent = err;
      if (!err) {
        toast.hidden = true;
        toast.replaceChildren();
      }
    });
    toast.replaceChildren(h("span", {}, `Revoked: ${ruleText(r)}. `), undo);
    toast.hidden = false;
    undo.focus();
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
      if (r.origin) next.origin = r.origin; // and every rule where it came from
      if (command.value.trim()) {
        next.command = command.value.trim();
        if (r.network) next.network = true;
        if (r.workspace) next.workspace = r.workspace;
      }
      const parsed = parseArgs(args.value);
      if (typeof parsed === "string") {
        status.textContent = parsed;
        return;
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
    toast.hidden = true;
    status.textContent = await actions.loadRules();
    dlg.hidden = false;
    modal.open(close);
  });
  close.addEventListener("click", hide);
  store.subscribe("rules", render);
  store.subscribe("opened", () => render());
  render();
}

/** A default rule Jarvis ships (a credential store asks): it has a note and no origin. */
function builtInRule(r: PolicyRule): boolean {
  return !!r.note && !r.origin;
}

/** "name = pattern" lines as a rule's args, or what is wrong in words. */
function parseArgs(text: string): Record<string, string> | string {
  const parsed: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const m = line.match(/^\s*([^=\s]+)\s*=\s*(.*?)\s*$/);
    if (!m) return `Not “name = pattern”: ${line}`;
    parsed[m[1]] = m[2];
  }
  return parsed;
}
