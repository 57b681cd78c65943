// The composer's slash-command menu: typing "/" at the start of the message
// lists what can be run from there, from several sources — the session's
// ACP agent's own commands (agent.commands: choosing one puts "/name " in
// the composer, and the message is sent to the agent as typed) and the MCP
// servers' prompts ("/server:prompt": its arguments are asked for in a
// small form, then the filled prompt's text is put in the composer for the
// user to read and send).

import { h } from "./view";

/** An argument an item asks for before it runs (an MCP prompt's). */
export interface SlashArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** One entry of the menu. */
export interface SlashItem {
  /** What the user types and sees: "/review", "/every:args-prompt". */
  label: string;
  description?: string;
  /** Where it comes from, shown beside it ("agent", "MCP every"). */
  source: string;
  /** The input typed after an agent command's name, in words. */
  hint?: string;
  /** Arguments asked for in the small form (MCP prompts). */
  args?: SlashArgument[];
  /**
   * Runs the item with the form's values: resolves to the composer's new
   * text. Without it the label and a space go in the composer.
   */
  run?: (args: Record<string, string>) => Promise<string>;
}

/** A source of items; a failing source is left out of the menu. */
export type SlashSource = () => SlashItem[] | Promise<SlashItem[]>;

/** The items whose label starts with what was typed ("/" then no space yet). */
export function matchSlash(items: SlashItem[], text: string): SlashItem[] {
  if (!text.startsWith("/") || /\s/.test(text)) return [];
  const typed = text.toLowerCase();
  return items.filter((it) => it.label.toLowerCase().startsWith(typed));
}

/** The agent commands of a session, as menu items. */
export function agentItems(commands: { name: string; description?: string; hint?: string }[]): SlashItem[] {
  return commands.map((c) => ({ label: "/" + c.name, description: c.description, hint: c.hint, source: "agent" }));
}

export interface SlashMenu {
  /** The menu's element (shown above the composer while it has items). */
  el: HTMLElement;
  /** Reads the sources again and shows what matches the composer's text. */
  refresh(): Promise<void>;
  close(): void;
}

/**
 * Mounts the menu on the composer's textarea. Mount it before the
 * composer's own Enter handler: while the menu is open, Enter and Tab
 * choose, the arrows move and Escape closes it, and the message is not sent.
 */
export function mountSlashMenu(input: HTMLTextAreaElement, sources: SlashSource[], onError: (msg: string) => void): SlashMenu {
  const el = h("div", { class: "slash-menu", role: "listbox", "aria-label": "Commands", hidden: "" });
  input.insertAdjacentElement("beforebegin", el);
  let shown: SlashItem[] = [];
  let sel = 0;
  let form: HTMLElement | undefined;
  let seq = 0;

  const close = () => {
    shown = [];
    el.replaceChildren();
    el.setAttribute("hidden", "");
    form = undefined;
  };

  const draw = () => {
    el.replaceChildren();
    if (!shown.length) {
      el.setAttribute("hidden", "");
      return;
    }
    el.removeAttribute("hidden");
    shown.forEach((it, i) => {
      const row = h("div", { class: "slash-item" + (i === sel ? " selected" : ""), role: "option", "aria-selected": String(i === sel), "data-label": it.label },
        h("span", { class: "slash-label" }, it.label + (it.hint ? ` ‹${it.hint}›` : "")),
        h("span", { class: "slash-source" }, it.source),
      );
      if (it.description) row.append(h("span", { class: "slash-desc" }, it.description));
      row.addEventListener("mousedown", (e) => {
        e.preventDefault(); // keep the focus in the composer
        void choose(it);
      });
      el.append(row);
    });
  };

  const refresh = async () => {
    const text = input.value;
    if (!text.startsWith("/") || /\s/.test(text)) {
      if (!form) close();
      return;
    }
    const mine = ++seq;
    const lists = await Promise.all(sources.map(async (s) => {
      try {
        return await s();
      } catch {
        return [];
      }
    }));
    if (mine !== seq || form) return; // typed on meanwhile, or a form is open
    shown = matchSlash(lists.flat(), input.value);
    sel = Math.min(sel, Math.max(shown.length - 1, 0));
    draw();
  };

  const fill = async (it: SlashItem, args: Record<string, string>) => {
    try {
      input.value = await it.run!(args);
      close();
      input.focus();
    } catch (ex) {
      onError(ex instanceof Error ? ex.message : String(ex));
    }
  };

  const choose = async (it: SlashItem) => {
    if (!it.run) {
      input.value = it.label + " ";
      close();
      input.focus();
      return;
    }
    if (!it.args?.length) return fill(it, {});
    // The small form: one field per argument, required ones marked.
    el.replaceChildren();
    form = h("form", { class: "slash-form", "data-label": it.label }, h("div", { class: "slash-form-title" }, it.label + (it.description ? ` — ${it.description}` : "")));
    const fields = it.args.map((a) => {
      const f = h("input", { type: "text", name: a.name, "aria-label": a.title || a.name, placeholder: (a.title || a.name) + (a.required ? " (required)" : "") }) as HTMLInputElement;
      if (a.required) f.required = true;
      form!.append(h("label", {}, h("span", {}, (a.title || a.name) + (a.required ? " *" : "")), f, a.description ? h("span", { class: "hint" }, a.description) : ""));
      return f;
    });
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    cancel.addEventListener("click", () => {
      close();
      input.focus();
    });
    form.append(h("div", { class: "slash-form-buttons" }, h("button", { type: "submit" }, "Insert"), cancel));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const missing = it.args!.filter((a, i) => a.required && !fields[i].value.trim());
      if (missing.length) {
        onError(`Fill in ${missing.map((a) => a.title || a.name).join(", ")}.`);
        return;
      }
      const values: Record<string, string> = {};
      it.args!.forEach((a, i) => {
        if (fields[i].value.trim()) values[a.name] = fields[i].value;
      });
      void fill(it, values);
    });
    el.append(form);
    el.removeAttribute("hidden");
    fields[0]?.focus();
  };

  input.addEventListener("input", () => void refresh());
  input.addEventListener("keydown", (e) => {
    if (!shown.length || form) return;
    const stop = () => {
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      stop();
      sel = (sel + (e.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      draw();
    } else if ((e.key === "Enter" && !e.shiftKey && !e.isComposing) || e.key === "Tab") {
      stop();
      void choose(shown[sel]);
    } else if (e.key === "Escape") {
      stop();
      close();
    }
  });
  return { el, refresh, close };
}
