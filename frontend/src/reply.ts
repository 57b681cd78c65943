// Replies as the window shows them, with the Markdown renderer (marked and
// DOMPurify, markdown.ts) loaded on first need instead of at start-up: the
// first screen shows no reply, and the page holds about 5 MB less while it
// idles without one (docs/BENCHMARKS.md, desktop). Opening a session waits for
// the renderer (openSession), so replies are never shown half-rendered in
// practice; should one be rendered before it has loaded, it is shown as
// escaped plain text and the listeners of onMarkdownLoaded re-render it.
import type * as Markdown from "./markdown";
import { plainHTML } from "./plain";

type MarkdownModule = typeof Markdown;

let mod: MarkdownModule | undefined;
let loading: Promise<MarkdownModule> | undefined;
let fellBack = false;
const listeners: (() => void)[] = [];

/** Loads the Markdown renderer once; later calls return the same promise. */
export function loadMarkdown(): Promise<MarkdownModule> {
  if (!loading) {
    loading = import("./markdown").then(
      (m) => {
        mod = m;
        if (fellBack) {
          fellBack = false;
          for (const f of listeners) f();
        }
        return m;
      },
      (err) => {
        loading = undefined; // try again on the next need
        throw err;
      },
    );
  }
  return loading;
}

/** Whether the renderer has loaded. */
export function markdownLoaded(): boolean {
  return mod !== undefined;
}

/** Runs fn after the renderer loads if some text was shown plain before. */
export function onMarkdownLoaded(fn: () => void): void {
  listeners.push(fn);
}

function plainFallback(text: string): string {
  fellBack = true;
  loadMarkdown().catch(() => undefined);
  return plainHTML(text);
}

/** A reply as sanitized HTML (folded thoughts, then the answer). */
export function renderReply(text: string): string {
  return mod ? mod.renderReply(text) : plainFallback(text);
}

/**
 * Shows a reply in el, sanitized; a reply that grew since el last showed it
 * is rendered again only from its last block on (markdown.ts, showReply).
 */
export function showReply(el: Element, text: string, final: boolean, now?: () => number): void {
  if (mod) mod.showReply(el, text, final, now);
  else el.innerHTML = plainFallback(text);
}

/**
 * Shows a complete reply in el without parsing it on the window's thread
 * (markdown.ts, showReplyLater): plain text at once, rendered when parsed.
 */
export function showReplyLater(el: Element, text: string): Promise<void> {
  if (mod) return mod.showReplyLater(el, text);
  el.innerHTML = plainFallback(text);
  return Promise.resolve();
}

/** Plain text of a reply (for text-to-speech). */
export function plainText(text: string): string {
  return mod ? mod.plainText(text) : text.replace(/\s+/g, " ").trim();
}
