// @vitest-environment jsdom
// A config file changed outside Jarvis: the window says what it would start
// and where it would connect, and Apply approves exactly what it showed.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { mountConfigApproval } from "../src/views/configapproval";
import { bridgeOf, fakeBridge, flush, loadPage, type FakeBridge } from "./fakebridge";

let fb: FakeBridge;
let actions: Actions;
const $ = <T extends HTMLElement = HTMLElement>(s: string) => document.querySelector(s) as T;

beforeEach(() => {
  loadPage();
  fb = fakeBridge();
  actions = new Actions(new Store(), bridgeOf(fb));
  mountConfigApproval(actions);
});

describe("a config file changed outside Jarvis", () => {
  it("is shown with what it would do, and applied only when the user says so", async () => {
    fb.pendingConfig = { path: "/home/me/.config/jarvis/config.json", hash: "h1", lines: ["starts the program: /bin/sh -c x (agents[1].chat)", "connects to http://evil.example/v1 (providers.openai.baseUrl)"] };
    await actions.checkServiceWarning();
    const dlg = $("#config-approval");
    expect(dlg.hidden).toBe(false);
    expect($("#config-approval-path").textContent).toBe("/home/me/.config/jarvis/config.json");
    expect([...document.querySelectorAll("#config-approval-lines li")].map((l) => l.textContent)).toEqual(fb.pendingConfig.lines);
    expect(document.activeElement?.getAttribute("data-action")).toBe("not-now");

    // Swapped after it was shown: refused in words, the dialog stays.
    fb.pendingConfig = { ...fb.pendingConfig, hash: "h2" };
    $<HTMLButtonElement>('[data-action="approve-config"]').click();
    await flush();
    expect($("#config-approval-error").textContent).toContain("changed after it was shown");
    expect(dlg.hidden).toBe(false);
    expect(fb.calls.filter((c) => c.method === "ApproveConfig").map((c) => c.args)).toEqual([["h1"]]);

    await actions.checkServiceWarning(); // shows the new content
    $<HTMLButtonElement>('[data-action="approve-config"]').click();
    await flush();
    await flush();
    expect(dlg.hidden).toBe(true);
    expect(fb.pendingConfig).toBeUndefined();
  });

  it("Not now keeps the approved configuration", async () => {
    fb.pendingConfig = { path: "/c.json", hash: "h1", lines: ["starts no program and connects nowhere"] };
    await actions.checkServiceWarning();
    $<HTMLButtonElement>('[data-action="not-now"]').click();
    expect($("#config-approval").hidden).toBe(true);
    expect(fb.calls.some((c) => c.method === "ApproveConfig")).toBe(false);
  });
});
