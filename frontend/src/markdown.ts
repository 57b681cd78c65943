// Markdown rendering for every message shown in the window. Replies can come
// from external agents and contain arbitrary HTML: the output of marked is
// always passed through DOMPurify with a strict allowlist, and links may only
// be http(s) or mailto. Nothing in a reply can run in this window.
import { Marked } from "marked";
import DOMPurify from "dompurify";

const marked = new Marked({ gfm: true, breaks: true, async: false });

// Tags a reply may use. No forms, media, frames, SVG, MathML or styles.
const ALLOWED_TAGS = [
  "a", "b", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3", "h4", "h5", "h6",
  "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
  "table", "tbody", "td", "th", "thead", "tr", "ul", "input",
];
const ALLOWED_ATTR = ["href", "title", "class", "type", "checked", "disabled", "open", "align", "start", "colspan", "rowspan"];
const SAFE_URL = /^(?:https?:|mailto:)/i;

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
      const href = el.getAttribute("href") ?? "";
      if (!SAFE_URL.test(href.trim())) {
        el.removeAttribute("href");
      } else {
        el.setAttribute("rel", "noopener noreferrer nofollow");
        el.setAttribute("data-external", "1");
      }
    }
    if (el.tagName === "INPUT") el.setAttribute("disabled", "");
    if (el.hasAttribute("class")) {
      // Only the language classes marked puts on code blocks.
      const keep = (el.getAttribute("class") ?? "").split(/\s+/).filter((c) => /^language-[\w+-]{1,32}$/.test(c));
      if (keep.length) el.setAttribute("class", keep.join(" "));
      else el.removeAttribute("class");
    }
  });
  purifier = p;
  return p;
}

/** Sanitizes an HTML string with the window's allowlist. */
export function sanitize(html: string): string {
  return getPurifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    FORBID_TAGS: ["style", "script", "iframe", "object", "embed", "svg", "math", "form", "img", "video", "audio", "link", "meta", "base"],
    FORBID_ATTR: ["style", "srcset", "src", "action", "formaction", "xlink:href"],
    KEEP_CONTENT: true,
    RETURN_TRUSTED_TYPE: false,
  }) as string;
}

/**
 * Splits "<think>…</think>" reasoning out of a reply so it can be shown folded.
 * An unclosed block (still streaming) runs to the end.
 */
export function splitThoughts(text: string): { thoughts: string[]; answer: string } {
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

/** Renders Markdown to sanitized HTML. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text) as string;
  return sanitize(html);
}

/** Renders a reply: folded thoughts first, then the answer. */
export function renderReply(text: string): string {
  const { thoughts, answer } = splitThoughts(text);
  let out = "";
  for (const t of thoughts) {
    out += `<details class="thought"><summary>Thoughts</summary>${renderMarkdown(t)}</details>`;
  }
  return out + renderMarkdown(answer);
}

/** Plain text of a reply (for text-to-speech). */
export function plainText(text: string): string {
  const div = document.createElement("div");
  div.innerHTML = renderMarkdown(splitThoughts(text).answer);
  return (div.textContent ?? "").replace(/\s+/g, " ").trim();
}
