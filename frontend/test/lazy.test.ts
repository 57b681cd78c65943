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
    expect(foot).toEqual(["open-setup", "open-audit", "open-permissions", "open-mcp", "open-about"]);

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

describe("a running command's progress", () => {
  it("shows on the call's card while it runs", async () => {
    const { showOnCard } = await import("../src/lazy");
    document.body.innerHTML = `<div class="tool-card" data-call="call_7"></div>`;
    showOnCard({ call: "call_7", tool: "run_command", progress: 1200, message: "added 87 packages" });
    expect(document.querySelector('.tool-card[data-call="call_7"] .tool-progress')!.textContent).toBe("running… 1200 bytes of output\nadded 87 packages");
    showOnCard({ call: "call_7", tool: "run_command", progress: 2400, message: "done" });
    expect(document.querySelectorAll(".tool-progress").length).toBe(1);
    expect(document.querySelector(".tool-progress")!.textContent).toContain("2400 bytes");
    showOnCard({ call: "other", tool: "run_command", progress: 1 });
    expect(document.querySelectorAll(".tool-progress").length).toBe(1);
  });
});
