// @vitest-environment jsdom
// Attachments in the composer: the picker, drag and drop, the limits and
// what is sent (text files in the text, images as data URLs).
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { MAX_FILE_BYTES, readAttachment, withTextFiles } from "../src/attach";
import type { AppAPI } from "../src/bridge";
import { Store } from "../src/store";
import { mountConversation } from "../src/views/conversation";
import { mountNotice } from "../src/views/notice";
import { fakeBridge, flush, loadPage, type FakeBridge } from "./fakebridge";

let fb: FakeBridge;
let store: Store;
let actions: Actions;
let withImages: unknown[][];
const $ = (s: string) => document.querySelector(s) as HTMLElement;
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// The SendWithImages binding as the App has it (the fake records it).
function withSend(api: AppAPI): AppAPI {
  return new Proxy(api, {
    get(target, method: string) {
      if (method === "SendWithImages") return async (...args: unknown[]) => void withImages.push(args);
      return (target as any)[method];
    },
  });
}

beforeEach(async () => {
  loadPage();
  fb = fakeBridge();
  withImages = [];
  store = new Store();
  actions = new Actions(store, () => withSend(fb.api));
  mountNotice(store);
  mountConversation(actions);
  await actions.start();
});

function drop(...files: File[]): void {
  const ev = new Event("drop", { bubbles: true, cancelable: true });
  Object.defineProperty(ev, "dataTransfer", { value: { files, types: ["Files"] } });
  $("#composer").dispatchEvent(ev);
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await flush();
}

// Sends with the Send button (the form's submit).
function enter(text: string): void {
  ($("#input") as HTMLTextAreaElement).value = text;
  $("#composer").dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
}

describe("reading an attachment", () => {
  it("reads text as text and an image as a data URL, and refuses what cannot go, in plain words", async () => {
    expect(await readAttachment(new File(["a,b\n1,2\n"], "t.csv", { type: "text/csv" }))).toMatchObject({ kind: "text", content: "a,b\n1,2\n" });
    const img = await readAttachment(new File([PNG], "dot.png", { type: "image/png" }));
    expect(img.kind).toBe("image");
    expect(img.content).toMatch(/^data:image\/png;base64,iVBORw0KGgo=$/);
    await expect(readAttachment(new File([new Uint8Array(MAX_FILE_BYTES + 1)], "big.log"))).rejects.toThrow("big.log is 10.0 MB; a file may have at most 10 MB.");
    await expect(readAttachment(new File([new Uint8Array([1, 0, 2])], "a.bin"))).rejects.toThrow("neither a text file nor an image");
    await expect(readAttachment(new File([PNG], "a.bmp", { type: "image/bmp" }))).rejects.toThrow("only PNG, JPEG, GIF and WebP");
  });

  it("puts text files after the message in a fence longer than any inside", () => {
    const f = { name: "x.md", size: 9, kind: "text" as const, content: "```js\n1\n```\n" };
    expect(withTextFiles("see", [f])).toBe("see\n\nAttached file x.md (9 B):\n````\n```js\n1\n```\n````");
  });
});

describe("the composer", () => {
  it("sends dropped text files in the text and images as data URLs, then clears the list", async () => {
    drop(new File(["hello\n"], "notes.txt", { type: "text/plain" }), new File([PNG], "dot.png", { type: "image/png" }));
    await settle();
    expect(Array.from(document.querySelectorAll("#attachments .attachment")).map((e) => e.textContent)).toEqual(["notes.txt6 B✕", "dot.png8 B✕"]); // name, size in bytes (was "1 KB"), Remove
    expect(document.querySelectorAll("#attachments .attachment > svg.file-icon")).toHaveLength(2); // drawn, not an emoji
    enter("look at these");
    await settle();
    expect(withImages).toHaveLength(1);
    const [sid, text, images] = withImages[0] as [string, string, string[]];
    expect(sid).toBe(store.sessionId);
    expect(text).toBe("look at these\n\nAttached file notes.txt (6 B):\n```\nhello\n```");
    expect(images).toEqual(["data:image/png;base64,iVBORw0KGgo="]);
    expect($("#attachments").hidden).toBe(true);
    expect(fb.calls.some((c) => c.method === "Send")).toBe(false);    expect($("#messages .msg.user .msg-images").textContent).toBe("1 image attached");
  });

  it("says a stored message had images when the conversation is opened again", async () => {
    fb.messages.set("s9", [{ id: 1, role: "user", text: "what is it?", turnId: "t1", meta: { images: ["data:image/png;base64,iVBORw0KGgo=", "data:image/png;base64,iVBORw0KGgo="] } }, { id: 2, role: "assistant", text: "dots", turnId: "t1" }]);
    fb.sessions.push({ sessionId: "s9", agentId: "general" });
    await actions.openSession("s9");
    await settle();
    expect($("#messages .msg.user .msg-images").textContent).toBe("2 images attached");
  });

  it("refuses a file over the limit with a notice, keeps the others, and sends text alone through Send", async () => {
    const picker = $("#attach-input") as HTMLInputElement;
    Object.defineProperty(picker, "files", { value: [new File([new Uint8Array(MAX_FILE_BYTES + 1)], "huge.txt", { type: "text/plain" }), new File(["ok"], "small.txt", { type: "text/plain" })], configurable: true });
    picker.dispatchEvent(new Event("change"));
    await settle();
    expect($("#notice").textContent).toContain("huge.txt is 10.0 MB");
    expect(document.querySelectorAll("#attachments .attachment")).toHaveLength(1);
    // Removing it leaves a plain message.
    ($("#attachments .attachment button") as HTMLButtonElement).click();
    enter("just text");
    await settle();
    expect(withImages).toHaveLength(0);
    expect(fb.calls.find((c) => c.method === "Send")?.args[1]).toBe("just text");
  });
});
