// Small DOM helpers. Text always goes in as textContent, never as markup.
import type { Session } from "./bridge";

export function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

/** A stable colour per agent, readable on light and dark backgrounds. */
/**
 * Makes a modal dialog behave as one: Tab and Shift+Tab stay among its
 * controls, Esc calls close. Returns open(), which remembers the element
 * that had the focus (the opener) and moves the focus in; close() gives the
 * focus back to it.
 */
export function modalDialog(dlg: HTMLElement, close: () => void): { open(first?: HTMLElement): void; restore(): void } {
  let opener: HTMLElement | null = null;
  const focusable = () =>
    Array.from(dlg.querySelectorAll<HTMLElement>("button, input, select, textarea, a[href], summary, [tabindex]:not([tabindex='-1'])"))
      .filter((el) => !(el as HTMLButtonElement).disabled && !el.closest("[hidden]"));
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      // Only the dialog closes: not also the reply's Stop (keys.ts).
      e.preventDefault();
      e.stopPropagation();
      close();
      return;
    }
    if (e.key !== "Tab") return;
    const els = focusable();
    if (!els.length) return;
    const first = els[0], last = els[els.length - 1];
    const at = document.activeElement as HTMLElement | null;
    if (e.shiftKey && (at === first || !dlg.contains(at))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (at === last || !dlg.contains(at))) {
      e.preventDefault();
      first.focus();
    }
  });
  // A focus that leaves the dialog (a click outside) is brought back.
  document.addEventListener("focusin", (e) => {
    const t = e.target as Element;
    if (!dlg.hidden && !dlg.contains(t) && !t.closest?.(".modal")) focusable()[0]?.focus();
  });
  return {
    open(first) {
      if (!dlg.contains(document.activeElement)) opener = document.activeElement as HTMLElement | null;
      (first ?? focusable()[0])?.focus();
    },
    restore() {
      const o = opener;
      opener = null;
      if (o && document.contains(o)) o.focus();
    },
  };
}

export function agentColor(agentId: string): string {
  let x = 0;
  for (const ch of agentId) x = (x * 31 + ch.codePointAt(0)!) >>> 0;
  return `hsl(${x % 360} 55% 45%)`;
}

export function agentInitial(name: string): string {
  const m = name.trim().match(/\p{L}|\p{N}/u);
  return (m ? m[0] : "?").toUpperCase();
}

export function sessionTitle(s: Session): string {
  if (s.name) return s.name;
  // Unnamed: its last words, without Markdown (a reply's fence or marks).
  const t = s.lastSnippet ? titleFrom(s.lastSnippet.replace(/^```[^\n]*\n/, "")) : "";
  if (t) return t.length > 40 ? t.slice(0, 40) + "…" : t;
  return "New conversation";
}

/**
 * A conversation's title from its first message: the first line with the
 * Markdown marks taken out, at most 60 characters, cut at a word.
 */
export function titleFrom(text: string): string {
  let t = text
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[\[[^\]]*\]\]/g, " ")
    .replace(/<[^>]+>/g, " ")
    .split("\n")
    .map((l) => l.replace(/^\s*(#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, "").trim())
    .find((l) => l.replace(/[*_`~]/g, "").trim() !== "") ?? "";
  t = t.replace(/[*_`~]+/g, "").replace(/\s+/g, " ").trim();
  if (t.length <= 60) return t;
  const cut = t.slice(0, 60);
  const at = cut.lastIndexOf(" ");
  return (at > 30 ? cut.slice(0, at) : cut) + "…";
}

/**
 * Copies text to the clipboard: the app's own (native) clipboard where the
 * window has it, else the async API, else a selection. WebKit refuses the
 * async API when the page lacks focus or a user activation, so each way
 * falls back to the next.
 */
export async function copyText(text: string): Promise<void> {
  const native = (window as any).runtime?.ClipboardSetText as ((t: string) => Promise<boolean>) | undefined;
  if (native && (await native(text).catch(() => false))) return;
  if (navigator.clipboard?.writeText) {
    try {
      return await navigator.clipboard.writeText(text);
    } catch {
      // the selection below
    }
  }
  const ta = h("textarea", { "aria-hidden": "true" }) as HTMLTextAreaElement;
  ta.value = text;
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.append(ta);
  ta.select();
  const ok = document.execCommand("copy");
  ta.remove();
  if (!ok) throw new Error("the clipboard is not available");
}

/** The group a conversation is listed under, by its last activity: Today, Yesterday, Previous 7 days, Older. */
export function dateGroup(iso: string | undefined, now = new Date()): string {
  const t = iso ? new Date(iso) : undefined;
  if (!t || isNaN(t.getTime())) return "Older";
  const day = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((day(now) - day(t)) / 86_400_000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  return "Older";
}
