// @vitest-environment jsdom
// Code blocks of a finished reply: highlighted by class only, labelled, with
// Copy; the code's own text stays inert.
import { describe, expect, it } from "vitest";
import { decorateCode } from "../src/codeblocks";
import { renderReply } from "../src/markdown";

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
