// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";

// reply.ts keeps the loaded renderer in module state: each test imports a
// fresh copy.
async function fresh() {
  vi.resetModules();
  return await import("../src/reply");
}

describe("reply (Markdown loaded on first need)", () => {
  it("does not load the renderer until something asks for it", async () => {
    const r = await fresh();
    expect(r.markdownLoaded()).toBe(false);
    await r.loadMarkdown();
    expect(r.markdownLoaded()).toBe(true);
  });

  it("shows a reply as escaped plain text before the renderer loads, then tells its listeners", async () => {
    const r = await fresh();
    const loaded = vi.fn();
    r.onMarkdownLoaded(loaded);
    const html = r.renderReply('**bold** <img src=x onerror="window.pwned=1"> & "q"');
    expect(html).toBe('<p class="plain-reply">**bold** &lt;img src=x onerror=&quot;window.pwned=1&quot;&gt; &amp; &quot;q&quot;</p>');
    const div = document.createElement("div");
    div.innerHTML = html;
    expect(div.querySelector("img")).toBeNull();
    // The fallback started the load; the listener runs once it is done.
    await r.loadMarkdown();
    expect(loaded).toHaveBeenCalledTimes(1);
    expect(r.renderReply("**bold**")).toContain("<strong>bold</strong>");
  });

  it("does not call the listeners when nothing was shown plain", async () => {
    const r = await fresh();
    const loaded = vi.fn();
    r.onMarkdownLoaded(loaded);
    await r.loadMarkdown();
    r.renderReply("x");
    expect(loaded).not.toHaveBeenCalled();
  });

  it("renders and sanitizes like markdown.ts once loaded", async () => {
    const r = await fresh();
    const md = await r.loadMarkdown();
    const text = "<think>plan</think>Hi <script>window.pwned=1</script>[x](javascript:alert(1))";
    expect(r.renderReply(text)).toBe(md.renderReply(text));
    expect(r.renderReply(text)).not.toMatch(/<script|javascript:/i);
    expect(r.plainText("**a**\n\n b")).toBe("a b");
  });

  it("shows a reply in an element plain before the renderer loads, rendered after", async () => {
    const r = await fresh();
    const el = document.createElement("div");
    r.showReply(el, "**bold** <img src=x onerror=alert(1)>", false, () => 0);
    expect(el.querySelector(".plain-reply")?.textContent).toBe("**bold** <img src=x onerror=alert(1)>");
    expect(el.querySelector("img, strong")).toBeNull();
    const md = await r.loadMarkdown();
    r.showReply(el, "**bold** <img src=x onerror=alert(1)> more", false, () => 0);
    expect(el.innerHTML).toBe(md.renderReply("**bold** <img src=x onerror=alert(1)> more"));
    expect(el.querySelector("strong")?.textContent).toBe("bold");
  });

  it("gives plain text for speech before the renderer loads", async () => {
    const r = await fresh();
    expect(r.plainText("  one\n two  ")).toBe("one two");
  });

  it("loads once however often it is asked", async () => {
    const r = await fresh();
    const a = r.loadMarkdown();
    const b = r.loadMarkdown();
    expect(a).toBe(b);
    expect(await a).toBe(await b);
  });
});
