// @vitest-environment jsdom
// Panels loaded on first use (lazy.ts): the first click waits, visibly, for
// the panel's code, which then gets that click; a failed load is said and
// tried again on the next click. And the real panels, over the window's
// markup, open on their first click.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { mountLazyPanels, onFirstClick } from "../src/lazy";
import { Store } from "../src/store";
import { fakeBridge, flush, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

describe("onFirstClick", () => {
  beforeEach(() => {
    document.body.innerHTML = '<button id="b" type="button">Open</button>';
  });

  it("holds the first click until the panel is mounted, showing that it loads, then gives the panel that click", async () => {
    const b = document.getElementById("b")!;
    const got: string[] = [];
    let finish!: () => void;
    onFirstClick(
      b,
      () =>
        new Promise<void>((resolve) => {
          finish = () => {
            b.addEventListener("click", () => got.push("panel"));
            resolve();
          };
        }),
      (m) => got.push(`flash ${m}`),
    );
    b.click();
    b.click(); // a second click while it loads does not load twice
    expect(b.dataset.loading).toBe("1");
    expect(b.getAttribute("aria-busy")).toBe("true");
    finish();
    await flush();
    expect(got).toEqual(["panel"]);
    expect(b.dataset.loading).toBeUndefined();
    expect(b.hasAttribute("aria-busy")).toBe(false);
    b.click();
    expect(got).toEqual(["panel", "panel"]);
  });

  it("says a failed load and tries again on the next click", async () => {
    const b = document.getElementById("b")!;
    const got: string[] = [];
    let tries = 0;
    onFirstClick(
      b,
      async () => {
        if (++tries === 1) throw new Error("chunk missing");
        b.addEventListener("click", () => got.push("panel"));
      },
      (m) => got.push(`flash ${m}`),
    );
    b.click();
    await flush();
    expect(got).toEqual(["flash Could not load this panel: chunk missing"]);
    expect(b.dataset.loading).toBeUndefined();
    b.click();
    await flush();
    expect(got).toEqual(["flash Could not load this panel: chunk missing", "panel"]);
  });
});

describe("the lazy panels on the window's markup", () => {
  let fb: FakeBridge;
  let actions: Actions;
  const flashes: string[] = [];
  beforeEach(() => {
    loadPage();
    fb = fakeBridge();
    actions = new Actions(new Store(), bridgeOf(fb));
    flashes.length = 0;
    mountLazyPanels(actions, (m) => flashes.push(m));
  });

  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 100 && !cond(); i++) await flush();
    return cond();
  };

  it("keeps the buttons where the panels put them, and opens each panel on its first click", async () => {
    const foot = Array.from(document.querySelectorAll(".sidebar-foot button")).map((b) => b.id);
    expect(foot).toEqual(["open-setup", "open-memory", "open-audit", "open-permissions", "open-mcp", "open-about"]);

    document.getElementById("open-audit")!.click();
    expect(await until(() => !document.getElementById("audit")!.hidden)).toBe(true);
    expect(await until(() => fb.calls.some((c) => c.method === "AuditList"))).toBe(true);

    document.getElementById("open-permissions")!.click();
    expect(await until(() => !!document.getElementById("permissions") && !document.getElementById("permissions")!.hidden)).toBe(true);
    expect(document.querySelectorAll("#open-permissions")).toHaveLength(1);
  });

  it("opens an agent's test once it can run one", async () => {
    actions.store.publish("agentTest", { agentId: "px", displayName: "Proxy", type: "proxy", status: { state: "ready" } });
    expect(await until(() => !document.getElementById("agent-test")!.hidden)).toBe(true);
    expect(document.getElementById("agent-test-title")!.textContent).toBe("Test “Proxy”");
    expect(flashes).toEqual([]);
  });
});

describe("a running call's progress", () => {
  it("shows a command's output (command:progress) and an MCP server's progress (mcp:progress) on the call's card", async () => {
    loadPage();
    const fb = fakeBridge();
    const flashes: string[] = [];
    mountLazyPanels(new Actions(new Store(), bridgeOf(fb)), (m) => flashes.push(m));
    document.body.insertAdjacentHTML("beforeend", `<div class="tool-card" data-call="call_7"></div><div class="tool-card" data-call="call_8"></div>`);
    const progress = (call: string) => document.querySelector(`.tool-card[data-call="${call}"] .tool-progress`)?.textContent;
    fb.emit("command:progress", { call: "call_7", bytes: 1200, line: "added 87 packages" });
    expect(progress("call_7")).toBe("running… 1200 bytes of output\nadded 87 packages");
    expect(flashes.at(-1)).toBe("run_command: 1200 bytes of output — added 87 packages");
    fb.emit("command:progress", { call: "call_7", bytes: 2400, line: "done" });
    expect(document.querySelectorAll('.tool-card[data-call="call_7"] .tool-progress').length).toBe(1);
    expect(progress("call_7")).toContain("2400 bytes");
    fb.emit("command:progress", { call: "other", bytes: 1 });
    expect(document.querySelectorAll(".tool-progress").length).toBe(1);
    fb.emit("mcp:progress", { call: "call_8", tool: "mcp__fs__scan", progress: 3, total: 10, message: "indexing" });
    expect(progress("call_8")).toBe("mcp__fs__scan: 3/10 — indexing");
  });
});
