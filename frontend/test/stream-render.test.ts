// @vitest-environment jsdom
// showReply renders a streamed reply from its last block on; what it shows
// must be what renderReply gives for the same text, after every delta.
import { describe, expect, it } from "vitest";
import { renderReply, showReply as showTimed } from "../src/markdown";
import { docs, pieces, randomDocs } from "./docs";

// What these tests compare is the rendering, not the time it takes: each parse
// is given a clock that says it took no time, so that the streaming time
// budget (tested in pathological.test.ts) never switches a reply to plain text.
const showReply = (el: Element, text: string, final: boolean) => showTimed(el, text, final, () => 0);

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
    }, 60_000); // three streams of each document: past vitest's 5 s on a loaded machine
  }

  it("shows what renderReply gives for random documents of tricky lines", () => {
    for (const [d, doc] of randomDocs(100, 12345).entries()) {
      const el = document.createElement("div");
      for (const text of pieces(doc, d + 1, 4)) {
        showReply(el, text, false);
        expect(el.innerHTML, `document ${JSON.stringify(doc)}, after ${JSON.stringify(text)}`).toBe(whole(text));
      }
    }
  }, 60_000);

  it("renders a long reply whole in steps, as renderReply does", () => {
    // (No unclosed fence or thoughts in the middle: the whole text stays Markdown blocks.)
    const blocks = Object.entries(docs).filter(([k]) => !["code", "thoughts", "twoThoughts"].includes(k));
    const long = blocks.map(([, d]) => d).join("\n\n```go\nx := 1\n```\n\n").repeat(12);
    expect(long.length).toBeGreaterThan(10_000);
    for (const text of [long, `<think>${long}</think>\n\n${long}`, `${long}\n\n<details>\n\n**x**\n\n</details>\n\n${long}`]) {
      for (const final of [false, true]) {
        const el = document.createElement("div");
        showReply(el, text, final);
        expect(el.innerHTML).toBe(whole(text));
        showReply(el, text + " more", false); // and it grows from there
        expect(el.innerHTML).toBe(whole(text + " more"));
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

  it("shows a reply with CR LF line ends as renderReply does, and keeps its settled blocks", () => {
    const el = document.createElement("div");
    let text = "# Head\r\n\r\nFirst paragraph.\r\n\r\n";
    showReply(el, text, false);
    const head = el.querySelector("h1");
    showReply(el, (text += "Second\r\nline"), false);
    expect(el.innerHTML).toBe(whole(text));
    expect(el.querySelector("h1")).toBe(head);
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
