// @vitest-environment jsdom
/// <reference types="node" />
// Untrusted replies must not freeze or break the window: every pattern
// reported against Markdown parsers renders (as Markdown, or as escaped plain
// text past the parser's limits) without throwing, in the window's thread and
// in the parsing worker, and a worker that runs over its budget is abandoned.
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Worker } from "node:worker_threads";
import { renderReply, showReply, showReplyLater } from "../src/markdown";
import { MAX_MARKDOWN_CHARS, MAX_NESTING, unsafeMarkdown } from "../src/mdparse";
import { OffThread } from "../src/offthread";
import { docs, randomDocs } from "./docs";
import { pathological } from "./pathological";
import { nodeWorker, workerScript } from "./nodeworker";

const corpus = pathological(8000);
// Past the limits: shown as plain text, never given to marked.
const plain = [
  "unclosed links [a](",
  "unclosed links with spaces",
  "unclosed images ![a](",
  "nested brackets",
  "quote markers, 20,000",
  "quote markers with spaces",
  "quotes one deeper a line",
  "deep list by indentation",
  "list markers on one line",
  "ordered markers on one line",
  "emphasis openers",
  "over the length cap, 1 MB",
  "thought holding quotes",
];

function shownBy(f: (el: HTMLElement) => void): HTMLElement {
  const el = document.createElement("div");
  document.body.append(el);
  f(el);
  return el;
}

function html(s: string): string {
  const div = document.createElement("div");
  div.innerHTML = s;
  return div.innerHTML;
}

const started: Worker[] = [];
afterAll(async () => {
  await Promise.all(started.map((w) => w.terminate()));
});

describe("pathological Markdown", () => {
  it("keeps the limits on length and nesting", () => {
    expect(unsafeMarkdown("a".repeat(MAX_MARKDOWN_CHARS))).toBe("");
    expect(unsafeMarkdown("a".repeat(MAX_MARKDOWN_CHARS + 1))).toMatch(/longer than/);
    expect(unsafeMarkdown(">".repeat(MAX_NESTING) + " a")).toBe("");
    expect(unsafeMarkdown(">".repeat(MAX_NESTING + 1) + " a")).toMatch(/nested deeper/);
    expect(unsafeMarkdown("(".repeat(MAX_NESTING + 1))).toMatch(/nested deeper/);
    // Parentheses close, and a blank line ends the paragraph they count in.
    expect(unsafeMarkdown("(a) ".repeat(1000))).toBe("");
    expect(unsafeMarkdown(":( ".repeat(MAX_NESTING) + "\n\n" + ":( ".repeat(MAX_NESTING))).toBe("");
    // Emphasis opened after a space and never closed nests; closed, it does not.
    expect(unsafeMarkdown("*a ".repeat(MAX_NESTING + 1))).toMatch(/nested deeper/);
    expect(unsafeMarkdown("*a* _b_ **c** ".repeat(1000))).toBe("");
    expect(unsafeMarkdown("- item\n".repeat(100) + "2 * 3 * 4 = 24")).toBe("");
    // Deep indentation inside a code fence is code, not nesting.
    expect(unsafeMarkdown("```\n" + " ".repeat(200) + "x\n```\n")).toBe("");
    expect(unsafeMarkdown(" ".repeat(200) + "- x")).toMatch(/nested deeper/);
  });

  it("never holds back an ordinary reply", () => {
    for (const doc of [...Object.values(docs), ...randomDocs(200, 777)]) expect(unsafeMarkdown(doc), doc).toBe("");
  });

  for (const [name, doc] of Object.entries(corpus)) {
    it(`renders ${name} without throwing`, () => {
      const out = renderReply(doc);
      const el = shownBy((e) => showReply(e, doc, true));
      expect(el.innerHTML).toBe(html(out));
      if (plain.includes(name)) {
        expect(out).toContain('class="plain-reply"');
        // All of the text is there, as text.
        expect(el.textContent!.replace(/^Thoughts/, "")).toContain(doc.replace(/<\/?think>/g, "").trim().slice(0, 1000));
      }
      // Streamed in two pieces, too (with a clock that says parsing took no
      // time: the budget that would show it plain is tested below).
      const half = shownBy((e) => {
        showReply(e, doc.slice(0, doc.length / 2), false, () => 0);
        showReply(e, doc, true, () => 0);
      });
      expect(half.innerHTML).toBe(html(out));
    }, 60_000);
  }
});

describe("parsing in the worker", () => {
  it("shows what renderReply gives, plain text first", async () => {
    const script = await workerScript();
    const off = new OffThread(() => nodeWorker(script, started));
    const texts = [...Object.values(docs), ...Object.values(pathological(4000))];
    const els = texts.map((t) => {
      const el = shownBy(() => undefined);
      const done = showReplyLater(el, t, off);
      // At once: the plain text, escaped.
      expect(el.querySelector(".plain-reply")).not.toBeNull();
      return done.then(() => el);
    });
    const shown = await Promise.all(els);
    shown.forEach((el, i) => expect(el.innerHTML, texts[i].slice(0, 80)).toBe(html(renderReply(texts[i]))));
    expect(off.abandoned).toBe(0);
    expect(off.unavailable).toBe(false);
  }, 120_000);

  it("abandons a worker past its budget, shows plain text, and starts a new one", async () => {
    const script = await workerScript();
    const hung = "self.onmessage = () => { for (;;) {} };";
    const spawned: Worker[] = [];
    let n = 0;
    const off = new OffThread(() => nodeWorker(n++ === 0 ? `const self = globalThis; ${hung}` : script, spawned), 300);
    const exited = new Promise((res) => setTimeout(() => spawned[0].once("exit", res), 0));
    const first = shownBy(() => undefined);
    await showReplyLater(first, "**never parsed**", off);
    expect(off.abandoned).toBe(1);
    expect(first.innerHTML).toBe('<p class="plain-reply">**never parsed**</p>');
    await exited; // the hung thread was terminated
    const second = shownBy(() => undefined);
    await showReplyLater(second, "**parsed**", off);
    expect(second.innerHTML).toBe("<p><strong>parsed</strong></p>\n");
    expect(spawned.length).toBe(2);
    started.push(...spawned);
  }, 60_000);

  it("parses in the window when no worker can start", async () => {
    const off = new OffThread(() => {
      throw new Error("Worker is not defined");
    });
    const el = shownBy(() => undefined);
    await showReplyLater(el, "# title\n\n" + ">".repeat(20000), off);
    expect(off.unavailable).toBe(true);
    expect(el.innerHTML).toBe(html(renderReply("# title\n\n" + ">".repeat(20000))));
  });

  it("drops a request whose element left the window before its turn", async () => {
    let spawned = 0;
    const off = new OffThread(() => {
      spawned++;
      throw new Error("not reached");
    });
    const el = document.createElement("div"); // never in the window
    await showReplyLater(el, "**x**", off);
    expect(el.innerHTML).toBe('<p class="plain-reply">**x**</p>');
    expect(spawned).toBe(0);
  });
});

describe("the streaming time budget", () => {
  it("shows a reply plain once a delta took too long to parse, and parses it whole off the thread when it ends", async () => {
    let t = 0;
    const slowClock = () => (t += 150); // every parse seems to take 150 ms
    const el = shownBy((e) => showReply(e, "# title\n\n**a", false, slowClock));
    showReply(el, "# title\n\n**a** b", false, slowClock);
    expect(el.innerHTML).toBe('<p class="plain-reply"># title\n\n**a** b</p>');
    showReply(el, "# title\n\n**a** b c", true, slowClock);
    await vi.waitFor(() => expect(el.innerHTML).toBe(html(renderReply("# title\n\n**a** b c"))));
  });

  it("keeps rendering a reply whose deltas parse within the budget", () => {
    const fastClock = () => 0;
    const el = shownBy((e) => showReply(e, "# title\n\n**a", false, fastClock));
    showReply(el, "# title\n\n**a** b", false, fastClock);
    expect(el.innerHTML).toBe(html(renderReply("# title\n\n**a** b")));
  });
});
