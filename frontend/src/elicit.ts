// The dialog of an MCP server's elicitation request ("mcp:elicit", from the
// MCPPanel binding, app/mcp.go): the server's name and message, and either
// a form built from the requested schema (flat: text, email, URL, date,
// numbers, a switch, single and multiple choices) or a URL, opened only when
// the user clicks it. Decline is the default: it has the focus, and Escape
// declines. The server checks the content against its schema.
import { errText, openExternal } from "./bridge";
import { h } from "./view";

export interface Elicitation {
  id: string;
  server: string;
  mode: "form" | "url";
  message: string;
  schema?: { properties?: Record<string, Prop>; required?: string[] };
  url?: string;
}

interface Prop {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  enum?: string[];
  enumNames?: string[];
  oneOf?: { const: string; title?: string }[];
  items?: { enum?: string[]; anyOf?: { const: string; title?: string }[] };
}

export type Answer = (action: "accept" | "decline" | "cancel", content?: Record<string, unknown>) => void;

/** The choices of an enum property: value and label. */
function choices(p: Prop | Prop["items"]): { value: string; label: string }[] {
  if (!p) return [];
  const x = p as Prop & { anyOf?: { const: string; title?: string }[] };
  const titled = x.oneOf ?? x.anyOf;
  if (titled) return titled.map((o) => ({ value: o.const, label: o.title ?? o.const }));
  return (x.enum ?? []).map((v, i) => ({ value: v, label: x.enumNames?.[i] ?? v }));
}

const inputType: Record<string, string> = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

/** One field: its input and how to read its value (undefined: left empty). */
function field(name: string, p: Prop, required: boolean): { el: HTMLElement; read: () => unknown } {
  const label = `${p.title ?? name}${required ? " *" : ""}`;
  const hint = p.description ? h("span", { class: "hint" }, ` ${p.description}`) : "";
  if (p.type === "boolean") {
    const box = h("input", { type: "checkbox", "data-elicit-field": name }) as HTMLInputElement;
    box.checked = p.default === true;
    return { el: h("label", { class: "elicit-field" }, box, ` ${label}`, hint), read: () => box.checked };
  }
  if (p.type === "array") {
    const boxes = choices(p.items).map((c) => {
      const b = h("input", { type: "checkbox", value: c.value, "data-elicit-field": name }) as HTMLInputElement;
      b.checked = Array.isArray(p.default) && p.default.includes(c.value);
      return { b, el: h("label", {}, b, ` ${c.label} `) };
    });
    return {
      el: h("fieldset", { class: "elicit-field" }, h("legend", {}, label), hint, ...boxes.map((x) => x.el)),
      read: () => boxes.filter((x) => x.b.checked).map((x) => x.b.value),
    };
  }
  const cs = choices(p);
  if (cs.length) {
    const sel = h("select", { "data-elicit-field": name }, ...(required ? [] : [h("option", { value: "" }, "—")]), ...cs.map((c) => h("option", { value: c.value }, c.label))) as HTMLSelectElement;
    if (typeof p.default === "string") sel.value = p.default;
    return { el: h("label", { class: "elicit-field" }, `${label} `, sel, hint), read: () => sel.value || undefined };
  }
  const num = p.type === "number" || p.type === "integer";
  const attrs: Record<string, string> = { type: num ? "number" : (inputType[p.format ?? ""] ?? "text"), "data-elicit-field": name };
  if (num && p.type === "integer") attrs.step = "1";
  if (num && p.type === "number") attrs.step = "any";
  if (p.minimum !== undefined) attrs.min = String(p.minimum);
  if (p.maximum !== undefined) attrs.max = String(p.maximum);
  if (p.maxLength !== undefined) attrs.maxlength = String(p.maxLength);
  if (required) attrs.required = "";
  const inp = h("input", attrs) as HTMLInputElement;
  if (p.default !== undefined) inp.value = String(p.default);
  return {
    el: h("label", { class: "elicit-field" }, `${label} `, inp, hint),
    read: () => {
      if (inp.value === "") return undefined;
      return num ? Number(inp.value) : inp.value;
    },
  };
}

/** The dialog for one request; answer is called once. */
export function renderElicit(e: Elicitation, answer: Answer): HTMLElement {
  let done = false;
  const once: Answer = (a, c) => {
    if (done) return;
    done = true;
    answer(a, c);
  };
  const decline = h("button", { type: "button", "data-elicit": "decline" }, "Decline");
  decline.addEventListener("click", () => once("decline"));
  const box = h(
    "section",
    { class: "elicit", role: "dialog", "aria-modal": "true", "aria-label": `${e.server} asks you`, "data-elicit-id": e.id },
    h("h2", {}, `${e.server} asks you`),
    h("p", { class: "elicit-message" }, e.message),
  );
  const buttons = h("div", { class: "prompt-buttons" }, decline);
  if (e.mode === "url") {
    box.append(h("p", {}, "It asks you to open this address:"), h("pre", { class: "mono", "data-elicit": "url" }, e.url ?? ""));
    const open = h("button", { type: "button", "data-elicit": "open" }, "Open in browser");
    open.addEventListener("click", () => {
      openExternal(e.url ?? "");
      once("accept");
    });
    buttons.append(open);
  } else {
    const props = e.schema?.properties ?? {};
    const req = new Set(e.schema?.required ?? []);
    const fields = Object.entries(props).map(([n, p]) => ({ n, ...field(n, p, req.has(n)) }));
    const form = h("form", { class: "elicit-form" }, ...fields.map((f) => f.el)) as HTMLFormElement;
    const err = h("p", { class: "warn", "data-elicit": "error" });
    const send = h("button", { type: "button", "data-elicit": "accept" }, "Send");
    send.addEventListener("click", () => {
      const content: Record<string, unknown> = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) content[f.n] = v;
      }
      const missing = [...req].filter((n) => content[n] === undefined);
      if (missing.length) {
        err.textContent = `Fill in: ${missing.map((n) => props[n]?.title ?? n).join(", ")}`;
        return;
      }
      once("accept", content);
    });
    form.addEventListener("submit", (ev) => ev.preventDefault());
    box.append(form, err);
    buttons.append(send);
  }
  box.append(h("p", { class: "hint" }, "Nothing is sent to the server unless you choose to."), buttons);
  box.addEventListener("keydown", (ev) => {
    if ((ev as KeyboardEvent).key === "Escape") once("decline");
  });
  return box;
}

interface ElicitAPI {
  MCPElicitAnswer(id: string, action: string, content: Record<string, unknown> | null): Promise<void>;
}

/** Shows one request's dialog; the answer goes to the MCPPanel binding. */
export function showElicit(e: Elicitation, flash: (msg: string, good?: boolean) => void): void {
  const api = () => (window as unknown as { go?: { app?: { MCPPanel?: ElicitAPI } } }).go?.app?.MCPPanel;
  const el = renderElicit(e, (action, content) => {
    el.remove();
    api()
      ?.MCPElicitAnswer(e.id, action, content ?? null)
      .catch((err) => flash(errText(err)));
  });
  document.body.append(el);
  (el.querySelector('[data-elicit="decline"]') as HTMLElement | null)?.focus();
}
