// @vitest-environment jsdom
// The Permissions dialog as a real dialog: Esc closes it, Tab stays inside,
// the focus goes back to the button that opened it; each rule says where it
// came from; Add rule picks any known tool; the conversation's grants are
// listed; Revoke can be undone.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { mountPermissions } from "../src/views/permissions";
import { fakeBridge, flush, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

let fb: FakeBridge;
let actions: Actions;
const $ = (s: string) => document.querySelector(s) as HTMLElement;
const key = (k: string, shift = false) =>
  (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", { key: k, shiftKey: shift, bubbles: true, cancelable: true }));

async function openDialog(): Promise<void> {
  const opener = $("#open-permissions") as HTMLButtonElement;
  opener.focus();
  opener.click();
  await flush();
  await flush();
}

beforeEach(() => {
  loadPage();
  fb = fakeBridge();
  actions = new Actions(new Store(), bridgeOf(fb));
  actions.store.sessions = [{ sessionId: "s1", agentId: "general", name: "Pack for the lake trip" }];
  actions.store.sessionId = "s1";
  fb.rules = [
    { tool: "read_file", args: { path: ".ssh/*" }, action: "ask", note: "this file holds credentials" },
    { tool: "write_file", args: { path: "notes/todo.txt" }, action: "allow", origin: { kind: "prompt", session_id: "s1", chat: "Old title", at: "2026-11-28T18:05:00Z" } },
    { tool: "write_file", args: { path: "gone.txt" }, action: "allow", origin: { kind: "prompt", session_id: "s9", chat: "A deleted chat", at: "2026-11-27T09:00:00Z" } },
    { tool: "open_url", action: "deny" },
  ];
  fb.grants = [
    { session_id: "s1", rule: { tool: "open_app", args: { app_id: "firefox" }, action: "allow" } },
    { session_id: "s2", rule: { tool: "clipboard_read", action: "allow" } },
  ];
  mountPermissions(actions);
});

describe("the Permissions dialog", () => {
  it("closes on Esc and gives the focus back to the button that opened it", async () => {
    await openDialog();
    expect($("#permissions").hidden).toBe(false);
    expect($("#permissions").contains(document.activeElement)).toBe(true);
    key("Escape");
    expect($("#permissions").hidden).toBe(true);
    expect(document.activeElement).toBe($("#open-permissions"));
  });

  it("keeps the focus inside: Tab from the last control goes to the first, Shift+Tab from the first to the last", async () => {
    await openDialog();
    const inside = Array.from($("#permissions").querySelectorAll<HTMLElement>("button, input, select, textarea"))
      .filter((el) => !el.closest("[hidden]"));
    const first = inside[0], last = inside[inside.length - 1];
    last.focus();
    key("Tab");
    expect(document.activeElement).toBe(first);
    key("Tab", true);
    expect(document.activeElement).toBe(last);
  });

  it("says where each rule came from: the chat and when, the page, built in, or before this version", async () => {
    await openDialog();
    const origin = (i: number) => $(`.permission-row[data-index="${i}"] .permission-origin`).textContent;
    // Yours first; the built-in credential rules folded under them.
    const rows = Array.from(document.querySelectorAll(".permission-row")).map((x) => (x as HTMLElement).dataset.index);
    expect(rows).toEqual(["1", "2", "3", "0"]);
    expect($('.permission-row[data-index="0"]').closest("details.permissions-builtin")).not.toBeNull();
    expect(origin(0)).toBe("Built in: credential files always ask");
    // The chat's title today (it was renamed since), and the time.
    expect(origin(1)).toMatch(/^Saved with “Always allow” in “Pack for the lake trip” · .*2026/);
    expect(origin(2)).toMatch(/^Saved with “Always allow” in “A deleted chat” · /);
    expect(origin(3)).toBe("Added by hand, or before Jarvis recorded where rules come from");
  });

  it("lists this conversation's grants only", async () => {
    await openDialog();
    const items = Array.from(document.querySelectorAll("#permissions-grants li")).map((x) => x.textContent);
    expect(items).toEqual(["Allow open_app when app_id firefox"]);
  });

  it("adds a rule for a tool picked from the known tools, MCP tools by their titles", async () => {
    await openDialog();
    const pick = $('#permissions-add select[aria-label="Tool"]') as HTMLSelectElement;
    const labels = Array.from(pick.options).map((o) => o.textContent);
    expect(labels[0]).toBe("Run a program (a command rule)");
    expect(labels).toContain("Everything › Echo");
    expect(labels).toContain("Write file");
    pick.value = "mcp__every__echo";
    pick.dispatchEvent(new Event("change"));
    expect(($("#permissions-add .permission-command") as HTMLElement).hidden).toBe(true);
    ($('#permissions-add textarea[aria-label="Arguments"]') as HTMLTextAreaElement).value = "message = hello*";
    ($("#permissions-add") as HTMLFormElement).dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    await flush();
    expect(fb.rules.at(-1)).toEqual({ tool: "mcp__every__echo", args: { message: "hello*" }, action: "allow", origin: { kind: "page", at: "2026-11-29T00:30:00Z" } });
    expect($(`.permission-row[data-index="${fb.rules.length - 1}"] .permission-origin`).textContent).toMatch(/^Added on this page · /);
  });

  it("revokes with Undo: the rule comes back with its origin", async () => {
    await openDialog();
    const saved = fb.rules[1];
    ($('.permission-row[data-index="1"] [data-action="revoke"]') as HTMLButtonElement).click();
    await flush();
    await flush();
    expect(fb.rules).not.toContainEqual(saved);
    expect($("#permissions-toast").hidden).toBe(false);
    expect($("#permissions-toast").textContent).toContain("Revoked: Allow write_file when path notes/todo.txt");
    const undo = $('#permissions-toast [data-action="undo"]') as HTMLButtonElement;
    expect(document.activeElement).toBe(undo);
    undo.click();
    await flush();
    await flush();
    expect(fb.rules).toContainEqual(saved);
    expect($("#permissions-toast").hidden).toBe(true);
    const texts = Array.from(document.querySelectorAll(".permission-row .permission-origin")).map((x) => x.textContent!);
    expect(texts.some((t) => t.includes("Pack for the lake trip"))).toBe(true);
  });
});
