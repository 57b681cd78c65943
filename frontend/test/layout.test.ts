// @vitest-environment jsdom
// Item 10 and 13 of the conversation: the sidebar folds away and stays so,
// tool cards are one line that opens, attached files are chips with their
// real size and an icon drawn inline.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { byteSize, splitTextFiles, withTextFiles, type Attachment } from "../src/attach";
import { Store } from "../src/store";
import { mountConversation, toolCard, toolTarget } from "../src/views/conversation";
import { mountHeader } from "../src/views/header";
import { mountSidebarToggle } from "../src/views/layout";
import { mountNotice } from "../src/views/notice";
import { mountSidebar } from "../src/views/sidebar";
import { bridgeOf, fakeBridge, flush, loadPage } from "./fakebridge";

const $ = (s: string) => document.querySelector(s) as HTMLElement;
let actions: Actions;

beforeEach(async () => {
  localStorage.clear();
  loadPage();
  const fb = fakeBridge();
  const store = new Store();
  actions = new Actions(store, bridgeOf(fb));
  const flash = mountNotice(store);
  mountSidebar(actions);
  mountHeader(actions, flash);
  mountConversation(actions);
  await actions.start();
});

const key = (k: string, ctrl = true) => document.dispatchEvent(new KeyboardEvent("keydown", { key: k, ctrlKey: ctrl, bubbles: true, cancelable: true }));

describe("the sidebar", () => {
  it("folds away by its button and by Ctrl+B, and comes back folded at the next start", () => {
    mountSidebarToggle();
    const shell = $("#shell");
    const button = $("#sidebar-toggle");
    expect(shell.classList.contains("sidebar-collapsed")).toBe(false);
    expect(button.getAttribute("aria-expanded")).toBe("true");
    button.click();
    expect(shell.classList.contains("sidebar-collapsed")).toBe(true);
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(button.getAttribute("aria-label")).toBe("Show the conversation list (Ctrl+B)");
    key("b");
    expect(shell.classList.contains("sidebar-collapsed")).toBe(false);
    key("B");
    expect(shell.classList.contains("sidebar-collapsed")).toBe(true);
    // The next start: the same page loaded again.
    loadPage();
    mountSidebarToggle();
    expect($("#shell").classList.contains("sidebar-collapsed")).toBe(true);
    // Ctrl+K (find a conversation) shows it again.
    key("k");
    expect($("#shell").classList.contains("sidebar-collapsed")).toBe(false);
  });

  it("has an icon that needs no font: an inline drawing", () => {
    expect($("#sidebar-toggle svg path")).not.toBeNull();
    expect($("#sidebar-toggle").textContent!.trim()).toBe("");
  });
});

describe("tool cards", () => {
  const card = (tool: any) => toolCard({ key: "tool-1", kind: "tool", text: "", tool: { id: "tc_1", pending: false, ...tool } });

  it("are one line (tool, what it acts on, risk and decision) that opens to the arguments and the result", () => {
    const c = card({ name: "write_file", arguments: { path: "/home/me/notes.md", content: "hi" }, risk: "risky", decision: "denied", decidedBy: "user", ok: false, error: "denied by user" });
    expect(c.tagName).toBe("DETAILS");
    expect(c.hasAttribute("open")).toBe(false);
    const head = c.querySelector(":scope > summary.tool-head")!;
    expect(head.querySelector(".tool-name")!.textContent).toBe("write_file");
    expect(head.querySelector(".tool-target")!.textContent).toBe("/home/me/notes.md");
    expect(Array.from(head.querySelectorAll(".badge")).map((b) => b.textContent)).toEqual(["risky", "denied · user"]);
    // The arguments and the result are inside, not on the line.
    expect(head.querySelector(".tool-args, .tool-result")).toBeNull();
    expect(c.querySelector(":scope > .tool-args")!.textContent).toContain('"content": "hi"');
    expect(c.querySelector(":scope > .tool-result.failed")!.textContent).toBe("denied by user");
    expect(c.dataset.decision).toBe("denied");
  });

  it("name a command with its arguments, and say when an allowed call failed", () => {
    expect(toolTarget({ program: "git", args: ["status", "--short"] })).toBe("git status --short");
    expect(toolTarget({ url: "https://example.com" })).toBe("https://example.com");
    expect(toolTarget({ content: "x" })).toBe("");
    const c = card({ name: "read_file", arguments: { path: "/nope" }, decision: "allowed", decidedBy: "policy", ok: false, error: "no such file" });
    expect(Array.from(c.querySelectorAll(".tool-head .badge")).map((b) => b.textContent)).toEqual(["allowed · policy", "failed"]);
  });

  it("stay open when the user opened one and its call is updated", async () => {
    await actions.newSession();
    const id = actions.store.sessionId;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "tool.request", data: { id: "tc_1", name: "read_file", arguments: { path: "/a" }, risk: "safe", turn_id: "t" } });
    const open = () => $('#messages .tool-card[data-call="tc_1"]');
    expect(open()).not.toBeNull();
    open().setAttribute("open", "");
    actions.onStreamEvent({ sessionId: id, id: "2", type: "tool.result", data: { id: "tc_1", ok: true, result: "A", turn_id: "t" } });
    expect(open().hasAttribute("open")).toBe(true);
    expect(open().querySelector(".tool-result")!.textContent).toBe("A");
  });
});

describe("attached files", () => {
  it("have their size in the right unit: a 52-byte file is 52 B", () => {
    expect(byteSize(52)).toBe("52 B");
    expect(byteSize(0)).toBe("0 B");
    expect(byteSize(1536)).toBe("1.5 KB");
    expect(byteSize(20 * 1024)).toBe("20 KB");
    expect(byteSize(3.5 * 1024 * 1024)).toBe("3.5 MB");
  });

  it("are chips in the sent message with an inline icon, the words above them, the file on a click", async () => {
    const f: Attachment = { name: "notes.txt", size: 52, kind: "text", content: "line one\n```\ncode\n```\nline two\n" };
    const message = withTextFiles("Summarize this", [f, { ...f, name: "b.md", size: 3, content: "abc" }]);
    expect(splitTextFiles(message).text).toBe("Summarize this");
    await actions.send(message, []);
    await flush();
    const user = $("#messages .msg.user .msg-text");
    expect(user.firstChild!.textContent).toBe("Summarize this");
    expect(user.textContent).not.toContain("```");
    const chips = Array.from(user.querySelectorAll<HTMLElement>("button.attachment"));
    expect(chips.map((c) => [c.querySelector(".attachment-name")!.textContent, c.querySelector(".attachment-size")!.textContent])).toEqual([
      ["notes.txt", "52 B"],
      ["b.md", "3 B"],
    ]);
    expect(chips[0].querySelector("svg.file-icon path")).not.toBeNull();
    const preview = user.querySelector<HTMLElement>(".sent-file-preview")!;
    expect(preview.hidden).toBe(true);
    chips[0].click();
    expect(preview.hidden).toBe(false);
    expect(preview.textContent).toBe("line one\n```\ncode\n```\nline two");
    chips[0].click();
    expect(preview.hidden).toBe(true);
  });

  it("leave a message without them, or with other text after them, as it was", () => {
    for (const m of ["just words", "Attached file x.txt (2 B):\n```\nhi\n```\nand then more words", "see ```\ncode\n```"]) {
      expect(splitTextFiles(m)).toEqual({ text: m, files: [] });
    }
    // A message of files only has no words.
    expect(splitTextFiles("Attached file x.txt (2 B):\n```\nhi\n```")).toEqual({ text: "", files: [{ name: "x.txt", size: "2 B", content: "hi" }] });
  });

  it("show as chips in the composer with their size, never an emoji", async () => {
    const input = $("#attach-input") as HTMLInputElement;
    const file = new File(["x".repeat(52)], "tiny.txt", { type: "text/plain" });
    Object.defineProperty(input, "files", { configurable: true, value: [file] });
    input.dispatchEvent(new Event("change"));
    for (let i = 0; i < 20 && !$("#attachments .attachment"); i++) await flush();
    const chip = $("#attachments .attachment");
    expect(chip.querySelector(".attachment-size")!.textContent).toBe("52 B");
    expect(chip.querySelector("svg.file-icon")).not.toBeNull();
    expect(chip.textContent).not.toMatch(/[📄🖼]/u);
  });
});
