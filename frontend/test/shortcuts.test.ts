// @vitest-environment jsdom
// The shortcut help (? outside a text field, or Ctrl+/) lists every
// shortcut in a dialog that Esc closes; the window's chrome is not text to
// select, the conversation is.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { mountKeys, SHORTCUTS } from "../src/views/keys";
import { bridgeOf, fakeBridge, loadPage } from "./fakebridge";

const $ = (s: string) => document.querySelector(s) as HTMLElement;
const press = (target: EventTarget, key: string, ctrl = false) =>
  target.dispatchEvent(new KeyboardEvent("keydown", { key, ctrlKey: ctrl, bubbles: true, cancelable: true }));

beforeEach(() => {
  loadPage();
  mountKeys(new Actions(new Store(), bridgeOf(fakeBridge())));
});

describe("keyboard shortcut help", () => {
  it("opens on ? and on Ctrl+/, lists every shortcut, and closes on Esc", () => {
    expect($("#shortcuts").hidden).toBe(true);
    press(document.body, "?");
    expect($("#shortcuts").hidden).toBe(false);
    const keys = Array.from(document.querySelectorAll("#shortcuts dt")).map((x) => x.textContent);
    expect(keys).toEqual(SHORTCUTS.map(([k]) => k));
    expect(keys).toContain("Ctrl+N");
    press(document.activeElement!, "Escape");
    expect($("#shortcuts").hidden).toBe(true);
    press(document.body, "/", true);
    expect($("#shortcuts").hidden).toBe(false);
  });

  it("does not open on ? typed in the message box", () => {
    const box = document.querySelector("textarea") as HTMLTextAreaElement;
    box.focus();
    press(box, "?");
    expect($("#shortcuts").hidden).toBe(true);
  });
});

describe("the window's chrome", () => {
  it("is not selectable as text, while fields stay selectable", () => {
    const css = readFileSync(resolve(__dirname, "../src/style.css"), "utf8");
    const rule = css.match(/([^{}]+)\{ -webkit-user-select: none; user-select: none; \}/);
    expect(rule).not.toBeNull();
    const selectors = rule![1].split(",").map((s) => s.trim().split("\n").pop()!.trim());
    for (const s of ["#sidebar", "#topbar", "button", "label"]) expect(selectors).toContain(s);
    expect(selectors.some((s) => /messages|msg/.test(s))).toBe(false);
    expect(css).toMatch(/input, textarea, \[contenteditable\] \{ -webkit-user-select: text; user-select: text; \}/);
  });
});
