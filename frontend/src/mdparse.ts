// The Markdown parser both the window and its parsing worker (md.worker.ts)
// use: one configured marked instance, the limits a text must keep to before
// it is lexed at all, and the escaped plain text shown for anything else.
// Replies come from agents and are untrusted: a text that is too long or too
// deeply nested is never given to marked (marked throws RangeError on a few
// thousand nested quotes, and its time grows with a reply's length), and a
// text marked fails on is shown as plain text. Nothing here touches the DOM,
// so the worker can import it; HTML from here is sanitized by markdown.ts.
import { Marked } from "marked";
import { plainHTML } from "./plain";

export const marked = new Marked({ gfm: true, breaks: true, async: false });

// WebKit runs some of marked's block rules (thematic breaks, quotes, lists,
// HTML, tables, setext headings) without its regular-expression JIT, in time
// that grows with the rest of the text at every block, so lexing grew with
// the square of a reply's length: 35 ms for 11 KB in the window, 450 ms for
// 44 KB. Each of these rules is skipped where a cheap test shows it cannot
// match (its first characters; a table's delimiter row), which leaves
// marked's output as it was (test/markdown.test.ts compares it with plain
// marked), and a whole reply is lexed in steps (growInSteps).
const unless = (possible: (src: string) => boolean) => (src: string) => (possible(src) ? false : undefined);
const startsWith = (re: RegExp) => unless((src) => re.test(src));
marked.use({
  tokenizer: {
    hr: startsWith(/^ {0,3}[-_*]/),
    blockquote: startsWith(/^ {0,3}>/),
    list: startsWith(/^ {0,3}(?:[*+-]|\d{1,9}[.)])/),
    html: startsWith(/^ {0,3}</),
    // A table's second line is its delimiter row, which has a ":" or "|".
    table: unless((src) => /[:|]/.test(line(src, src.indexOf("\n") + 1))),
    // A setext heading's underline ends the paragraph it heads.
    lheading: unless((src) => /\n {0,3}(?:=+|-+) *$/m.test(src.slice(0, blankLine(src)))),
  },
});

// line returns the line of src that starts at at (nothing when at is 0: no
// line break came before it).
function line(src: string, at: number): string {
  if (at <= 0) return "";
  const end = src.indexOf("\n", at);
  return src.slice(at, end < 0 ? src.length : end);
}

// blankLine returns where src's first blank line starts (its length if none).
function blankLine(src: string): number {
  const i = src.search(/\n[ \t]*\n/);
  return i < 0 ? src.length : i;
}

/**
 * The most characters of a text that are rendered as Markdown: longer texts
 * are shown as plain text. 100,000 characters is about 60 printed pages, and
 * marked 18 lexes the worst pattern we know of that long (repeated "[a](")
 * in about 350 ms without a JIT.
 */
export const MAX_MARKDOWN_CHARS = 100_000;

/**
 * The deepest nesting rendered as Markdown: block containers on a line
 * (quotes, list items, indentation by two columns) and, within a paragraph,
 * brackets, parentheses and emphasis ("*", "_" after a space) not yet
 * closed. marked recurses once a level.
 */
export const MAX_NESTING = 32;

/** Where a scan of a growing text stands (scanMarkdown). */
export interface ScanState {
  pos: number; // the text before pos is scanned: whole lines
  fence: string; // the open code fence's marker, if any
  open: number; // brackets and parentheses open in the paragraph
  emph: number; // emphasis delimiter runs open in the paragraph
}

export const newScan = (): ScanState => ({ pos: 0, fence: "", open: 0, emph: 0 });

/**
 * Why text is not given to marked ("" when it may be): too long, or nested
 * deeper than MAX_NESTING. One pass over the text, no regular expressions.
 */
export function unsafeMarkdown(text: string): string {
  return scanMarkdown(text, newScan());
}

/**
 * unsafeMarkdown for a text that grows by appends: st carries the scan of
 * the whole lines seen before, so that each delta of a streamed reply scans
 * only what it added (and the last line again).
 */
export function scanMarkdown(text: string, st: ScanState): string {
  if (text.length > MAX_MARKDOWN_CHARS) return `longer than ${MAX_MARKDOWN_CHARS} characters`;
  for (;;) {
    const end = text.indexOf("\n", st.pos);
    if (end < 0) break;
    const why = scanLine(text, st.pos, end, st);
    if (why) return why;
    st.pos = end + 1;
  }
  // The last line may still grow: scanned on a copy of the state.
  return st.pos < text.length ? scanLine(text, st.pos, text.length, { ...st }) : "";
}

// scanLine scans text[at:end], one line, into st.
function scanLine(text: string, at: number, end: number, st: ScanState): string {
  // Leading containers: ">" and list markers, and indentation.
  let i = at;
  let depth = 0;
  let cols = 0;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 32) cols++;
    else if (c === 9) cols += 4;
    else if (c === 62) depth++; // >
    else if ((c === 45 || c === 43 || c === 42) && (text.charCodeAt(i + 1) === 32 || text.charCodeAt(i + 1) === 9)) depth++; // - + *
    else if (c >= 48 && c <= 57) {
      let j = i;
      while (j < end && j - i < 9 && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      const d = text.charCodeAt(j);
      if ((d !== 46 && d !== 41) || (text.charCodeAt(j + 1) !== 32 && text.charCodeAt(j + 1) !== 9)) break;
      depth++;
      i = j;
    } else break;
  }
  const rest = text.slice(i, Math.min(end, i + 3));
  if (st.fence) {
    if (rest.startsWith(st.fence)) st.fence = "";
    return "";
  }
  if (depth + Math.floor(cols / 2) > MAX_NESTING) return `nested deeper than ${MAX_NESTING} levels`;
  if (rest === "```" || rest === "~~~") {
    st.fence = rest;
    return "";
  }
  if (i === end) st.open = st.emph = 0; // a blank line ends the paragraph
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 91 || c === 40) { // [ (
      if (++st.open > MAX_NESTING) return `nested deeper than ${MAX_NESTING} levels`;
    } else if ((c === 93 || c === 41) && st.open > 0) st.open--; // ] )
    else if (c === 42 || c === 95) { // * _: a run opens emphasis after a space, closes before one
      let j = i;
      while (j + 1 < end && text.charCodeAt(j + 1) === c) j++;
      const before = i > at ? text.charCodeAt(i - 1) : 32;
      const after = j + 1 < end ? text.charCodeAt(j + 1) : 32;
      const opens = isSpace(before) && !isSpace(after);
      const closes = !isSpace(before) && isSpace(after);
      if (opens && ++st.emph > MAX_NESTING) return `nested deeper than ${MAX_NESTING} levels`;
      if (closes && st.emph > 0) st.emph--;
      i = j;
    }
  }
  return "";
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/**
 * Markdown to HTML, not yet sanitized; escaped plain text for a text outside
 * the limits or one marked fails on. Never throws.
 */
export function parseMarkdown(text: string): string {
  if (unsafeMarkdown(text)) return plainHTML(text);
  try {
    return marked.parse(text) as string;
  } catch {
    return plainHTML(text);
  }
}

/**
 * Splits "<think>…</think>" reasoning out of a reply so it can be shown folded.
 * An unclosed block (still streaming) runs to the end.
 */
export function splitThoughts(text: string): { thoughts: string[]; answer: string } {
  // Most replies have no "<think>" in any case: a native search says so
  // sooner than the regular expressions below (a streamed reply is split at
  // every delta, and the window's JavaScript runs without a JIT).
  if (!text.includes("<t") && !text.includes("<T")) return { thoughts: [], answer: text.trim() };
  const thoughts: string[] = [];
  let answer = "";
  let rest = text;
  for (;;) {
    const i = rest.search(/<think>/i);
    if (i < 0) {
      answer += rest;
      break;
    }
    answer += rest.slice(0, i);
    rest = rest.slice(i + 7);
    const j = rest.search(/<\/think>/i);
    if (j < 0) {
      thoughts.push(rest);
      break;
    }
    thoughts.push(rest.slice(0, j));
    rest = rest.slice(j + 8);
  }
  return { thoughts: thoughts.map((t) => t.trim()).filter(Boolean), answer: answer.trim() };
}

/** A reply's parts as HTML, not yet sanitized: what the worker sends back. */
export interface ParsedReply {
  thoughts: string[];
  answer: string;
}

/** Parses a reply's thoughts and answer (parseMarkdown each). */
export function parseReply(text: string): ParsedReply {
  const { thoughts, answer } = splitThoughts(text);
  return { thoughts: thoughts.map(parseMarkdown), answer: parseMarkdown(answer) };
}
