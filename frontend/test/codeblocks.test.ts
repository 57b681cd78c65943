// @vitest-environment jsdom
// Code blocks of a finished reply: highlighted by class only, labelled, with
// Copy; the code's own text stays inert.
import { describe, expect, it } from "vitest";
import { decorateCode } from "../src/codeblocks";
import { renderReply, showReply } from "../src/markdown";

function reply(md: string): HTMLElement {
  const el = document.createElement("div");
  el.innerHTML = renderReply(md); // sanitized
  return el;
}

describe("code blocks", () => {
  it("highlights a known language with classes, labels it and offers Copy", async () => {
    let copied = "";
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t: string) => void (copied = t) } });
    const el = reply("```go\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```");
    decorateCode(el);
    const code = el.querySelector(".code-block pre code")!;
    expect(el.querySelector(".code-lang")!.textContent).toBe("go");
    expect(code.querySelector(".hljs-keyword")!.textContent).toBe("func");
    expect(code.querySelector(".hljs-comment")!.textContent).toBe("// greet");
    expect(code.textContent).toBe('func main() {\n\tfmt.Println("hi") // greet\n}\n');
    expect(el.querySelector("[style]")).toBeNull();
    el.querySelector<HTMLElement>('[data-action="copy-code"]')!.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toBe(code.textContent);
    decorateCode(el); // once only
    expect(el.querySelectorAll(".code-block")).toHaveLength(1);
  });

  it("keeps markup in code inert and leaves unknown languages plain", () => {
    const el = reply('```html\n<img src=x onerror="window.__pwned=1">\n```\n\n```brainfuck\n+++.\n```');
    decorateCode(el);
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelectorAll(".code-block")[0].querySelector("code")!.textContent).toContain("<img src=x");
    const [, plain] = Array.from(el.querySelectorAll(".code-block"));
    expect(plain.querySelector(".code-lang")!.textContent).toBe("brainfuck");
    expect(plain.querySelector("code span")).toBeNull();
  });
});

describe("code blocks while a reply streams", () => {
  // The reply as the conversation shows it at each delta: rendered from its
  // last block on (showReply), then decorated (not final until the end).
  const stream = (el: HTMLElement, text: string, final: boolean, at: number) => {
    showReply(el, text, final, () => 0); // no time budget here: this machine is slow
    decorateCode(el, () => {}, final, () => at);
  };
  const shape = (el: HTMLElement) =>
    Array.from(el.querySelectorAll(".code-block")).map((b) => [b.querySelector(".code-lang")!.textContent, b.querySelector("code")!.textContent]);

  it("highlights and labels the block from the first delta, and nothing moves at the end", () => {
    const el = document.createElement("div");
    const full = "Here:\n\n```go\nfunc main() {\n\treturn // done\n}\n```\n\nThat is all.";
    let at = 0;
    let seen = false;
    for (let n = 1; n <= full.length; n++) {
      stream(el, full.slice(0, n), false, (at += 300)); // deltas slower than the interval: each one highlighted
      const code = el.querySelector(".code-block code");
      if (code && code.textContent!.startsWith("func")) {
        // Highlighted while it streams, with its label and Copy already there.
        expect(el.querySelector(".code-head .code-lang")!.textContent).toBe("go");
        expect(el.querySelector('[data-action="copy-code"]')).not.toBeNull();
        expect(code.querySelector(".hljs-keyword")?.textContent).toBe("func");
        seen = true;
      }
    }
    expect(seen).toBe(true);
    const before = el.innerHTML.replace(/<\/?span[^>]*>/g, "").replace(/ data-partial=""/g, "");
    const blockBefore = el.querySelector(".code-block");
    stream(el, full, true, (at += 20));
    // The end changes colours at most: the same elements, the same text.
    expect(el.querySelector(".code-block")).toBe(blockBefore);
    expect(el.innerHTML.replace(/<\/?span[^>]*>/g, "")).toBe(before);
    expect(el.querySelector("[data-partial]")).toBeNull();
    expect(el.querySelector(".hljs-comment")!.textContent).toBe("// done");
    expect(shape(el)).toEqual([["go", "func main() {\n\treturn // done\n}\n"]]);
  });

  it("highlights the growing block again at most every quarter second, the rest plain until then", () => {
    const el = document.createElement("div");
    stream(el, "```python\ndef f():\n", false, 1000);
    expect(el.querySelector(".hljs-keyword")!.textContent).toBe("def");
    stream(el, "```python\ndef f():\n    return None\n", false, 1100); // within the interval
    const code = el.querySelector(".code-block code")!;
    expect(code.hasAttribute("data-partial")).toBe(true);
    expect(code.textContent).toBe("def f():\n    return None\n");
    expect(code.querySelector(".hljs-literal")).toBeNull(); // "None" not highlighted yet
    stream(el, "```python\ndef f():\n    return None\n    # x\n", false, 1300); // after it
    expect(el.querySelector(".code-block code")!.hasAttribute("data-partial")).toBe(false);
    expect(el.querySelector(".hljs-literal")?.textContent).toBe("None");
  });

  it("keeps a streamed block's markup inert", () => {
    const el = document.createElement("div");
    stream(el, "```html\n<img src=x onerror=\"window.__pwned=1\">", false, 0);
    stream(el, "```html\n<img src=x onerror=\"window.__pwned=1\">\n<script>alert(1)</script>", false, 10);
    expect(el.querySelector("img, script")).toBeNull();
    expect(el.querySelector("code")!.textContent).toContain("<script>");
  });
});
