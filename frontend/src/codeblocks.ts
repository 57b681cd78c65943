// Code blocks of a finished reply: syntax highlighting (highlight.js core
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

/** Decorates every code block under root once: highlight, language label, copy button. */
export function decorateCode(root: Element, onCopyError: (msg: string) => void = () => {}): void {
  for (const pre of Array.from(root.querySelectorAll("pre"))) {
    if (pre.parentElement?.classList.contains("code-block")) continue;
    const code = pre.querySelector(":scope > code");
    if (!code) continue;
    const text = code.textContent ?? "";
    const lang = languageOf(code);
    if (lang && hljs.getLanguage(lang) && text.length <= MAX_HIGHLIGHT) {
      const html = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
      code.innerHTML = DOMPurify.sanitize(html, { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"] }); // sanitized
      code.classList.add("hljs");
    }
    const copy = h("button", { class: "icon code-copy", type: "button", "data-action": "copy-code", title: "Copy the code" }, "Copy");
    copy.addEventListener("click", () => {
      copyText(text).then(
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
