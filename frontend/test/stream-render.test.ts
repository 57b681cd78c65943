// @vitest-environment jsdom
// showReply renders a streamed reply from its last block on; what it shows
// must be what renderReply gives for the same text, after every delta.
import { describe, expect, it } from "vitest";
import { renderReply, showReply } from "../src/markdown";

const docs: Record<string, string> = {
  paragraphs: "First paragraph with a soft\nbreak and *emphasis over\ntwo lines*.\n\nSecond **bold** `code` [link](https://example.com/x).\n\n\nThird after two blank lines.",
  headings: "# Title\nText right under.\n## Sub\n\nSetext\n===\n\nAnother\n---\n\n---\n\nafter a rule",
  lists: "- one\n- two\n  - nested\n  - more\n- three\n\n1. first\n2. second\n\n7. starts at seven\n8. eight\n\n- loose\n\n- list\n\n  continued in the item\n\nnot in the list\n- [ ] task\n- [x] done",
  quotes: "> quoted\nlazy continuation\n> more\n\n> second quote\n\n>> nested\n\nout",
  code: "Intro:\n\n```go\nfunc main() {\n\n\tfmt.Println(\"<b>\")\n}\n```\n\n~~~\ntilde fence\n~~~\n\n    indented code\n    more\n\npara\n    not code (lazy)\n\n```python\nunclosed = True\n",
  tables: "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\ntext\n\n| x |\n|---|\n| y |",
  thoughts: "<think>Plan: first\n\n- a\n- b\n\nthen more</think>\n\nThe **answer**\n\n- with\n- a list\n\nand `code`.",
  twoThoughts: "<think>one</think>between<think>two\n\nstill two</think>\n\nend",
  mixed: "## Steps\n\n1. Open the file\n2. Run:\n\n   ```sh\n   make test\n   ```\n\n3. Done\n\n> **Note**: it *works*.\n\n| k | v |\n|---|---|\n| a | 1 |\n\nBye.",
  escapes: "\\*not emphasis\\* and a\\\nhard break  \nand two-space break\n\n&amp; &lt;tag&gt; &#169;",
};

// Deterministic piece sizes (a model's deltas are a few characters each).
function* pieces(text: string, seed: number, max: number): Generator<string> {
  let x = seed;
  for (let i = 0; i < text.length; ) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (x % max);
    yield text.slice(0, i + n);
    i += n;
  }
}

function whole(text: string): string {
  const div = document.createElement("div");
  div.innerHTML = renderReply(text);
  return div.innerHTML;
}

describe("showReply while a reply streams", () => {
  for (const [name, doc] of Object.entries(docs)) {
    it(`shows what renderReply gives after every delta: ${name}`, () => {
      for (const [seed, max] of [[1, 1], [7, 5], [42, 23]]) {
        const el = document.createElement("div");
        for (const text of pieces(doc, seed, max)) {
          showReply(el, text, false);
          expect(el.innerHTML, `after ${JSON.stringify(text.slice(-30))}`).toBe(whole(text));
        }
        showReply(el, doc, true);
        expect(el.innerHTML).toBe(whole(doc));
      }
    });
  }

  it("shows what renderReply gives for random documents of tricky lines", () => {
    // Line starts whose meaning depends on what follows or precedes them.
    const lines = ["#", "# h", "#x", "-", "- a", "* b", "+", "1.", "1. one", "2. two", "3)", "10", ">", "> q", ">> qq", "```", "```js",
      "~~~", "    code", "  two-space", "| a | b |", "|---|---|", "| 1 |", "===", "---", "***", "- [ ] t", "text", "more *em", "em* end",
      "`code", "x  ", "", "", ""];
    let x = 12345;
    const rnd = (n: number) => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x % n;
    };
    for (let d = 0; d < 100; d++) {
      const doc = Array.from({ length: 4 + rnd(10) }, () => lines[rnd(lines.length)]).join("\n");
      const el = document.createElement("div");
      for (const text of pieces(doc, d + 1, 4)) {
        showReply(el, text, false);
        expect(el.innerHTML, `document ${JSON.stringify(doc)}, after ${JSON.stringify(text)}`).toBe(whole(text));
      }
    }
  }, 60_000);

  it("keeps the nodes of blocks that can no longer change", () => {
    const el = document.createElement("div");
    let text = "# Head\n\nFirst paragraph.\n\n";
    showReply(el, text, false);
    showReply(el, (text += "Second"), false);
    const head = el.querySelector("h1");
    const first = el.querySelector("p");
    expect(head?.textContent).toBe("Head");
    for (let i = 0; i < 50; i++) showReply(el, (text += ` word${i}`), false);
    showReply(el, (text += "\n\n- item"), false);
    expect(el.querySelector("h1")).toBe(head);
    expect(el.querySelector("p")).toBe(first);
    expect(el.innerHTML).toBe(whole(text));
    showReply(el, text, true);
    expect(el.querySelector("h1")).toBe(head); // nothing to redo at the end
  });

  it("renders a reply that is not a continuation whole", () => {
    const el = document.createElement("div");
    showReply(el, "# One\n\nfirst", false);
    showReply(el, "Something else", false);
    expect(el.innerHTML).toBe(whole("Something else"));
    showReply(el, "<think>now thinking</think>", false);
    expect(el.innerHTML).toBe(whole("<think>now thinking</think>"));
  });

  it("renders link reference definitions whole, also for links above them", () => {
    const doc = "See [the docs][d] and [x].\n\nMore text.\n\n[d]: https://example.com/docs\n[x]: https://example.com/x \"X\"\n\nEnd.";
    const el = document.createElement("div");
    for (const text of pieces(doc, 3, 6)) {
      showReply(el, text, false);
      expect(el.innerHTML).toBe(whole(text));
    }
    expect(el.querySelector('a[href="https://example.com/docs"]')?.textContent).toBe("the docs");
  });

  it("renders raw HTML blocks whole at the end, and inert all along", () => {
    const doc = "Intro\n\n<details>\n\n**inside**\n\n</details>\n\n<div onclick=alert(1)>x</div>\n\n<img src=x onerror=alert(1)>\n\n<scr" + "ipt>alert(1)</script>\n\nend";
    const el = document.createElement("div");
    for (const text of pieces(doc, 5, 4)) {
      showReply(el, text, false);
      expect(el.querySelector("script, img, [onclick], [onerror]")).toBeNull();
    }
    showReply(el, doc, true);
    expect(el.innerHTML).toBe(whole(doc));
    expect(el.querySelector("details strong")?.textContent).toBe("inside");
  });
});
