import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Transcript } from "../src/transcript";
import { toolCard } from "../src/views/conversation";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
// server-everything's tiny PNG starts with these bytes (base64 of "\x89PNG\r\n\x1a\n").
const png = { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" };
const wav = { type: "audio", mimeType: "audio/wav", data: "UklGRg==" };

// jsdom has no blob: URLs; the browser's is recorded with its blob's type.
const blobs: Blob[] = [];
beforeAll(() => {
  URL.createObjectURL = (b: Blob | MediaSource) => {
    blobs.push(b as Blob);
    return `blob:jarvis/${blobs.length}`;
  };
});

describe("images and audio from a tool", () => {
  it("the card shows the image inline and the audio as a player, from the gate's decision", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "draw", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "mcp__every__get-tiny-image", arguments: {}, turn_id: "t1" }));
    t.decide({ callId: "c1", tool: "mcp__every__get-tiny-image", arguments: {}, class: "risky", decision: "allowed", decidedBy: "policy", ok: true, result: "[image 1: image/png, 8 bytes, attached]", media: [png, wav] });
    const card = toolCard(t.items.find((i) => i.kind === "tool")!);
    const img = card.querySelector("img.tool-image") as HTMLImageElement;
    expect(img).not.toBeNull();
    expect(img.getAttribute("src")).toMatch(/^blob:/);
    expect(blobs.map((b) => b.type)).toEqual(["image/png", "audio/wav"]);
    expect(blobs[0].size).toBe(8);
    expect(img.getAttribute("alt")).toContain("image/png");
    const audio = card.querySelector("audio.tool-audio")!;
    expect(audio.getAttribute("src")).toMatch(/^blob:/);
    expect(audio.hasAttribute("controls")).toBe(true);
    // Drawn again (a later event on the card): the same blob, not a new one.
    expect((toolCard(t.items.find((i) => i.kind === "tool")!).querySelector("img") as HTMLImageElement).getAttribute("src")).toBe(img.getAttribute("src"));
  });

  it("the service's tool.result carries them too; SVG and broken data are not shown", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "draw", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "mcp__x__pic", arguments: {}, turn_id: "t1" }));
    t.apply(ev(3, "tool.result", { id: "c1", ok: true, result: "pics", media: [png, { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" }, { type: "image", mimeType: "image/png", data: "%%%" }], turn_id: "t1" }));
    const card = toolCard(t.items.find((i) => i.kind === "tool")!);
    expect(card.querySelectorAll("img").length).toBe(1);
  });

  it("a reopened conversation shows the images and audio stored with the tool's message", () => {
    const t = new Transcript();
    t.load([
      { id: 1, role: "user", text: "draw", turnId: "t1" },
      { id: 2, role: "assistant", text: "", turnId: "t1", toolCalls: [{ id: "c1", function: { name: "mcp__every__get-tiny-image", arguments: "{}" } }] },
      {
        id: 3,
        role: "tool",
        toolCallId: "c1",
        text: "[image 1: image/png, 8 bytes, attached]",
        turnId: "t1",
        meta: { images: [`data:image/png;base64,${png.data}`, "https://example.com/x.png"], audio: [`data:audio/wav;base64,${wav.data}`], untrusted: [{ kind: "tool_result", name: "mcp__every__get-tiny-image" }] },
      },
      { id: 4, role: "assistant", text: "Here it is.", turnId: "t1" },
    ]);
    const it = t.items.find((i) => i.kind === "tool")!;
    expect(it.tool!.media).toEqual([png, wav]);
    const n = blobs.length;
    const card = toolCard(it);
    expect(card.querySelectorAll("img.tool-image").length).toBe(1);
    expect(card.querySelector("audio.tool-audio")!.getAttribute("src")).toMatch(/^blob:/);
    expect(blobs.slice(n).map((b) => [b.type, b.size])).toEqual([["image/png", 8], ["audio/wav", 4]]);
  });

  it("a tool message stored without media has no media on its card", () => {
    const t = new Transcript();
    t.load([
      { id: 1, role: "assistant", text: "", turnId: "t1", toolCalls: [{ id: "c1", function: { name: "list_dir", arguments: "{}" } }] },
      { id: 2, role: "tool", toolCallId: "c1", text: "a.txt", turnId: "t1", meta: { untrusted: [] } },
    ]);
    const it = t.items.find((i) => i.kind === "tool")!;
    expect(it.tool!.media).toBeUndefined();
    expect(toolCard(it).querySelector(".tool-media")).toBeNull();
  });

  it("the window's CSP lets blob: images and media in, not data: or remote ones", () => {
    const html = readFileSync(resolve(__dirname, "../index.html"), "utf8");
    const csp = /content="([^"]+)"/.exec(html.slice(html.indexOf("Content-Security-Policy")))![1];
    expect(csp).toContain("img-src 'self' blob:;");
    expect(csp).toContain("media-src blob:;");
    expect(csp).not.toContain("data:");
  });
});
