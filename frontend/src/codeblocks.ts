// Code blocks of a reply, while it streams and when it is complete: syntax
// highlighting (highlight.js core
// with the languages people paste most; it emits class names only, so the
// window's Content-Security-Policy, which allows no inline style, holds),
// a language label and a copy button. Loaded on first need, like the
// Markdown renderer. The highlighter's HTML is sanitized to spans with
// classes before it goes in: nothing from a reply is inserted as markup.
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { copyText, h } from "./view";

const languages = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);

// Past this size a block is shown plain: highlighting is not worth a stall.
const MAX_HIGHLIGHT = 100_000;

/** The language a code element names (class "language-x"), if it is one we highlight. */
export function languageOf(code: Element): string {
  const m = code.className.match(/(?:^|\s)language-([\w+#-]+)/);
  return m ? m[1].toLowerCase() : "";
}

// While a reply streams its last code block is rendered again at every
// delta. Highlighting it again each time would cost in proportion to its
// length at every delta (the window runs JavaScript without a JIT), so the
// block is highlighted again at most every STREAM_HIGHLIGHT_MS; in between,
// the highlighted part of the last pass is kept and the text added since is
// shown plain after it (marked data-partial), highlighted on the next pass or
// when the reply ends. The label and Copy are there from the first delta, so
// nothing moves when the reply ends.
const STREAM_HIGHLIGHT_MS = 250;

interface LastPass {
  lang: string;
  text: string;
  html: string;
  at: number;
}

const lastPass = new WeakMap<Element, LastPass>();

function escapeHTML(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function highlight(root: Element, code: Element, text: string, lang: string, final: boolean, now: number): void {
  const last = lastPass.get(root);
  if (!final && last && last.lang === lang && text.startsWith(last.text) && now - last.at < STREAM_HIGHLIGHT_MS) {
    code.innerHTML = last.html + escapeHTML(text.slice(last.text.length)); // sanitized when cached; the rest escaped
    if (text.length > last.text.length) code.setAttribute("data-partial", "");
  } else {
    const html = DOMPurify.sanitize(hljs.highlight(text, { language: lang, ignoreIllegals: true }).value, { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"] }) as string;
    code.innerHTML = html; // sanitized
    code.removeAttribute("data-partial");
    if (!final) lastPass.set(root, { lang, text, html, at: now });
  }
  code.classList.add("hljs");
}

/**
 * Decorates every code block under root once: highlight, language label,
 * copy button. final: the reply is complete (a block left partly plain while
 * it streamed is highlighted whole now); a reply still streaming is
 * decorated at each delta (its last block is new each time).
 */
export function decorateCode(root: Element, onCopyError: (msg: string) => void = () => {}, final = true, now: () => number = () => performance.now()): void {
  const pres = Array.from(root.querySelectorAll("pre"));
  for (const pre of pres) {
    // A block with another after it no longer grows: highlighted whole.
    const settled = final || pre !== pres[pres.length - 1];
    const code = pre.querySelector(":scope > code");
    if (!code) continue;
    const text = code.textContent ?? "";
    const lang = languageOf(code);
    const known = !!lang && !!hljs.getLanguage(lang) && text.length <= MAX_HIGHLIGHT;
    if (pre.parentElement?.classList.contains("code-block")) {
      if (settled && known && code.hasAttribute("data-partial")) highlight(root, code, text, lang, true, now());
      continue;
    }
    if (known) highlight(root, code, text, lang, settled, now());
    const copy = h("button", { class: "icon code-copy", type: "button", "data-action": "copy-code", title: "Copy the code" }, "Copy");
    copy.addEventListener("click", () => {
      copyText(code.textContent ?? text).then(
        () => {
          copy.textContent = "Copied";
          setTimeout(() => (copy.textContent = "Copy"), 1500);
        },
        (ex) => onCopyError(`Could not copy: ${ex?.message ?? ex}`),
      );
    });
    const head = h("div", { class: "code-head" }, h("span", { class: "code-lang" }, lang || "text"), copy);
    const box = h("div", { class: "code-block" });
    pre.replaceWith(box);
    box.append(head, pre);
  }
}
