// Markdown rendering for every message shown in the window. Replies can come
// from external agents and contain arbitrary HTML: the output of marked is
// always passed through DOMPurify with a strict allowlist, and links may only
// be http(s) or mailto. Nothing in a reply can run in this window.
import type { Token } from "marked";
import DOMPurify from "dompurify";
import { marked, newScan, parseMarkdown, parseReply, scanMarkdown, splitThoughts, unsafeMarkdown, type ParsedReply, type ScanState } from "./mdparse";
import { OffThread, plainReply } from "./offthread";
import { externalURL, SAFE_SCHEME } from "./links";

export { splitThoughts } from "./mdparse";

// Tags a reply may use. No forms, media, frames, SVG, MathML or styles.
const ALLOWED_TAGS = [
  "a", "b", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3", "h4", "h5", "h6",
  "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
  "table", "tbody", "td", "th", "thead", "tr", "ul", "input",
];
const ALLOWED_ATTR = ["href", "title", "class", "type", "checked", "disabled", "open", "align", "start", "colspan", "rowspan"];

let purifier: ReturnType<typeof DOMPurify> | null = null;

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook("uponSanitizeElement", (node, data) => {
    // GFM task lists render checkboxes; any other input is removed.
    if (data.tagName === "input") {
      const el = node as Element;
      if (el.getAttribute("type") !== "checkbox") el.parentNode?.removeChild(el);
    }
  });
  p.addHook("afterSanitizeAttributes", (node) => {
    const el = node as Element;
    if (el.tagName === "A") {
      const href = externalURL(el.getAttribute("href") ?? ""); // links.ts
      if (!href) {
        el.removeAttribute("href");
      } else {
        el.setAttribute("href", href);
        el.setAttribute("rel", "noopener noreferrer nofollow");
        el.setAttribute("data-external", "1");
      }
    }
    if (el.tagName === "INPUT") el.setAttribute("disabled", "");
    if (el.hasAttribute("class")) {
      // Only the language classes marked puts on code blocks, and the
      // window's own class for text shown plain (mdparse.ts, plainHTML).
      const keep = (el.getAttribute("class") ?? "").split(/\s+/).filter((c) => /^language-[\w+-]{1,32}$/.test(c) || c === "plain-reply");
      if (keep.length) el.setAttribute("class", keep.join(" "));
      else el.removeAttribute("class");
    }
  });
  // The configuration is read once here, not at every call: the window runs
  // JavaScript without a JIT (internal/webkit/lean_linux.go), and a streamed reply is
  // sanitized at every delta.
  p.setConfig({
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_SCHEME,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    FORBID_TAGS: ["style", "script", "iframe", "object", "embed", "svg", "math", "form", "img", "video", "audio", "link", "meta", "base"],
    FORBID_ATTR: ["style", "srcset", "src", "action", "formaction", "xlink:href"],
    KEEP_CONTENT: true,
    RETURN_TRUSTED_TYPE: false,
  });
  purifier = p;
  return p;
}

/** Sanitizes an HTML string with the window's allowlist. */
export function sanitize(html: string): string {
  return getPurifier().sanitize(html) as string;
}

/** Renders Markdown to sanitized HTML. */
export function renderMarkdown(text: string): string {
  return sanitize(parseMarkdown(text));
}

/** Renders a reply: folded thoughts first, then the answer. */
export function renderReply(text: string): string {
  return replyHTML(parseReply(text));
}

function thoughtsHTML(thoughts: string[]): string {
  return thoughts.map((t) => thoughtHTML(parseMarkdown(t))).join("");
}

function thoughtHTML(html: string): string {
  return `<details class="thought"><summary>Thoughts</summary>${sanitize(html)}</details>`;
}

// replyHTML sanitizes a parsed reply (its parts, as renderReply does).
function replyHTML(p: ParsedReply): string {
  return p.thoughts.map(thoughtHTML).join("") + sanitize(p.answer);
}

let off: OffThread | undefined;

// The window's parsing worker, started on first need. Vite builds
// md.worker.ts into a script of its own, which the window's
// Content-Security-Policy allows (worker-src 'self').
function offThread(): OffThread {
  off ??= new OffThread(() => new Worker(new URL("./md.worker.ts", import.meta.url), { type: "module" }) as never);
  return off;
}

/** The parsing worker's state: whether it could not start, how many were abandoned. */
export function parseWorkerState(): { unavailable: boolean; abandoned: number } {
  const o = offThread();
  return { unavailable: o.unavailable, abandoned: o.abandoned };
}

/**
 * Shows a complete reply in el without parsing it on the window's thread: as
 * escaped plain text at once, then, when the worker has parsed it within its
 * budget, rendered and sanitized (as showReply would). Resolves when el shows
 * its final form, or when el went on to show something else.
 */
export async function showReplyLater(el: Element, text: string, parser: OffThread = offThread()): Promise<void> {
  if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
  const { thoughts, answer } = splitThoughts(text);
  el.innerHTML = replyHTML(plainReply(text));
  // Rendered whole if it grows later (a reply shown complete does not).
  const mark: Shown = { text, thoughts, answer, seg: { ...growing(), whole: true } };
  shown.set(el, mark);
  const parsed = await parser.parse(text, () => shown.get(el) === mark && el.isConnected);
  if (parsed && shown.get(el) === mark) el.innerHTML = replyHTML(parsed);
}

// A streamed reply grows by appends, and rendering all of it again for every
// delta costs in proportion to its length: an 11 KB reply took about 55 ms a
// delta in WebKitGTK, most of it in marked's lexer (docs/BENCHMARKS.md,
// desktop). showReply keeps what an element shows and renders again only from
// the reply's last block on: a block with another block after it can no
// longer change when text is appended. What it shows is what renderReply
// gives for the same text (test/stream-render.test.ts streams a corpus and
// compares), except while a reply with raw HTML blocks streams, as each block
// is sanitized on its own: it is rendered whole when it ends. A reply with
// link reference definitions ("[x]: https://…"), whose links may sit in
// earlier blocks, is rendered whole at every delta.

/** The part of an element's reply that grows: the answer, or a thought before it. */
interface Growing {
  fixedLen: number; // text[:fixedLen] is rendered into the segment's first fixedNodes nodes
  fixedNodes: number;
  html: boolean; // raw HTML went by: render whole at the end
  whole: boolean; // render whole at every change (link definitions, or the lexer changed the text)
}

interface Shown {
  text: string;
  thoughts: string[];
  answer: string;
  seg: Growing;
}

const shown = new WeakMap<Element, Shown>();

const growing = (): Growing => ({ fixedLen: 0, fixedNodes: 0, html: false, whole: false });

/**
 * Shows a reply in el, sanitized, as el.innerHTML = renderReply(text) would;
 * a reply that grew by appends since el last showed it is rendered again only
 * from its last block on. final: the reply is complete.
 */
export function showReply(el: Element, text: string, final: boolean, now: () => number = () => performance.now()): void {
  if (overBudget.has(el)) {
    // Parsed too slowly once while streaming: plain text until it ends,
    // then parsed off the window's thread (showReplyLater).
    if (final) {
      overBudget.delete(el);
      void showReplyLater(el, text);
    } else {
      el.innerHTML = replyHTML(plainReply(text));
      shown.delete(el);
    }
    return;
  }
  const start = now();
  showReplyNow(el, text, final);
  if (!final && now() - start > streamBudgetMs) overBudget.add(el);
}

// A streamed reply is parsed on the window's thread, one delta at a time,
// from its last block on and inside the limits of mdparse.ts; one whose
// parse of a delta still takes longer than streamBudgetMs is not parsed
// there again: the window must stay responsive, whatever an agent streams.
const streamBudgetMs = 100;
const overBudget = new WeakSet<Element>();

function showReplyNow(el: Element, text: string, final: boolean): void {
  if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
  const was = shown.get(el);
  if (was?.text === text && !(final && was.seg.html)) return;
  const { thoughts, answer } = splitThoughts(text);
  // Text outside the parser's limits is rendered whole (renderReply shows
  // such a part plain), and a reply marked fails on is shown plain: nothing
  // in a reply throws at the caller.
  let html = "";
  if (unsafeReply(el, text, thoughts, answer)) html = renderReply(text);
  else {
    try {
      showGrowing(el, text, final, was, thoughts, answer);
      return;
    } catch {
      html = replyHTML(plainReply(text));
    }
  }
  el.innerHTML = html;
  shown.delete(el);
}

// The scan of the reply each element shows, kept while the reply grows by
// appends: a delta scans what it added, not the whole reply again (44 KB
// took 20 ms a delta without a JIT).
const scans = new WeakMap<Element, { text: string; st: ScanState }>();

// unsafeReply tells whether a part of a reply is outside the parser's
// limits. The whole text is scanned as it grows; only when it is unsafe
// are its parts scanned (renderReply shows the safe ones as Markdown).
function unsafeReply(el: Element, text: string, thoughts: string[], answer: string): boolean {
  let sc = scans.get(el);
  if (!sc || !text.startsWith(sc.text)) sc = { text: "", st: newScan() };
  const why = scanMarkdown(text, sc.st);
  sc.text = text;
  if (!why) {
    scans.set(el, sc);
    return false;
  }
  scans.delete(el);
  return unsafeMarkdown(answer) !== "" || thoughts.some((t) => unsafeMarkdown(t) !== "");
}

function showGrowing(el: Element, text: string, final: boolean, was: Shown | undefined, thoughts: string[], answer: string): void {
  const part = was && was.text !== text ? growingPart(was, thoughts, answer) : null;
  if (was && part) {
    if (part === "answer") {
      if (was.answer === "" && thoughts.length > 0) was.seg = growing(); // the answer starts after the thoughts
      grow(el, thoughts.length, was.seg, answer);
    } else {
      grow(el.children[thoughts.length - 1], 1, was.seg, thoughts[thoughts.length - 1]); // after its <summary>
    }
    Object.assign(was, { text, thoughts, answer });
    if (!(final && was.seg.html)) return;
  }
  el.replaceChildren();
  append(el, thoughtsHTML(thoughts), true);
  let seg = growing();
  growInSteps(el, thoughts.length, seg, answer);
  if (final && seg.html) {
    truncate(el, thoughts.length);
    append(el, renderMarkdown(answer), true);
    seg = growing();
  }
  shown.set(el, { text, thoughts, answer, seg });
}

// growInSteps renders text into box's nodes from index from on. It lexes in
// steps that end at blank lines, so that the lexer is given about STEP
// characters at a time (and never the whole of a long reply; see marked.use
// above), and renders and sanitizes what the steps settled at once: the
// window's JavaScript runs without a JIT, and each step's tail would
// otherwise be rendered, sanitized and dropped again.
function growInSteps(box: Element, from: number, g: Growing, text: string): void {
  const fixed: Token[] = [];
  for (let at = 0; text.length - at > STEP; ) {
    const cut = text.indexOf("\n\n", at + STEP);
    if (cut < 0) break;
    const s = settle(g, text.slice(0, cut + 2));
    if (!s) break;
    fixed.push(...s.fixed);
    at = cut + 2;
  }
  if (fixed.length > 0 && !g.whole) {
    truncate(box, from + g.fixedNodes);
    g.fixedNodes += append(box, marked.parser(fixed));
  }
  grow(box, from, g, text);
}

const STEP = 2000;

// growingPart tells which part of a reply changed, when it is the only one
// and it grew by appends: the answer, or (no answer yet) the last thought.
function growingPart(was: Shown, thoughts: string[], answer: string): "answer" | "thought" | null {
  const n = thoughts.length;
  const same = (k: number) => thoughts.slice(0, k).every((t, i) => t === was.thoughts[i]);
  if (n !== was.thoughts.length) return null;
  if (answer !== "") return answer.startsWith(was.answer) && same(n) ? "answer" : null;
  if (was.answer !== "" || n === 0) return null;
  return thoughts[n - 1].startsWith(was.thoughts[n - 1]) && same(n - 1) ? "thought" : null;
}

// grow renders text, which extends what the segment shows, into box's nodes
// from index from on.
function grow(box: Element, from: number, g: Growing, text: string): void {
  const s = settle(g, text);
  if (s) {
    truncate(box, from + g.fixedNodes);
    if (s.fixed.length > 0) g.fixedNodes += append(box, marked.parser(s.fixed));
    append(box, marked.parser(s.tail));
    return;
  }
  truncate(box, from);
  g.fixedLen = g.fixedNodes = 0;
  append(box, parseMarkdown(text));
}

// settle lexes text from where the segment's settled part ends, moves that
// end past the blocks appended text can no longer change (tailStart) and
// returns those blocks and the rest, or null when the segment is to be
// rendered whole (link definitions, or the lexer changed the text).
function settle(g: Growing, text: string): { fixed: Token[]; tail: Token[] } | null {
  if (g.whole) return null;
  const tokens = marked.lexer(text.slice(g.fixedLen));
  const fixed = tokens.slice(0, tailStart(tokens));
  const raw = fixed.map((t) => t.raw).join("");
  if (Object.keys(tokens.links).length > 0 || text.slice(g.fixedLen, g.fixedLen + raw.length) !== raw) {
    g.whole = true;
    return null;
  }
  g.html ||= hasHTML(tokens);
  g.fixedLen += raw.length;
  return { fixed, tail: tokens.slice(fixed.length) };
}

// tailStart returns the index of the first token that text appended to the
// tokens' source could still change: the last block, and before it any block
// it could still join: one with no blank line after it ("#" becomes "#x", a
// paragraph's next line), or a list (a later item continues it).
function tailStart(tokens: Token[]): number {
  let cut = tokens.length - 1;
  while (cut > 0 && tokens[cut].type === "space") cut--;
  while (cut > 0) {
    let prev = cut - 1;
    let between = "";
    for (; prev > 0 && tokens[prev].type === "space"; prev--) between = tokens[prev].raw + between;
    between = tokens[prev].raw + between;
    if (tokens[prev].type !== "list" && /\n[ \t]*\n$/.test(between)) break;
    cut = prev;
  }
  return Math.max(cut, 0);
}

function hasHTML(tokens: Token[]): boolean {
  let found = false;
  marked.walkTokens(tokens, (t) => {
    if (t.type === "html") found = true;
  });
  return found;
}

function truncate(box: Element, keep: number): void {
  while (box.childNodes.length > keep) box.lastChild!.remove();
}

// append sanitizes html (unless it already is), appends it to box and
// returns how many nodes it added.
function append(box: Element, html: string, sanitized = false): number {
  const t = document.createElement("template");
  t.innerHTML = sanitized ? html : sanitize(html);
  const n = t.content.childNodes.length;
  box.append(t.content);
  return n;
}

/** Plain text of a reply (for text-to-speech). */
export function plainText(text: string): string {
  const div = document.createElement("div");
  div.innerHTML = renderMarkdown(splitThoughts(text).answer);
  return (div.textContent ?? "").replace(/\s+/g, " ").trim();
}
