// Small DOM helpers. Text always goes in as textContent, never as markup.
import type { Session } from "./bridge";

export function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

/** A stable colour per agent, readable on light and dark backgrounds. */
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
  if (s.lastSnippet) return s.lastSnippet.length > 40 ? s.lastSnippet.slice(0, 40) + "…" : s.lastSnippet;
  return "New conversation";
}
