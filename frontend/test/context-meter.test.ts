// @vitest-environment jsdom
// The header's context meter in the page: it says in words and numbers what
// an empty conversation's share is made of, and Compact is off when there
// is nothing to compact.
import { beforeEach, describe, expect, it } from "vitest";
import { mountContext, type ContextInfo } from "../src/context";
import { flush } from "./fakebridge";

let info: ContextInfo;
let compacted = 0;

beforeEach(() => {
  document.body.innerHTML = `<header><span id="conn"></span></header><p id="outside">x</p>`;
  compacted = 0;
  (window as any).go = {
    app: {
      App: {
        SessionContext: async () => info,
        CompactSession: async () => void compacted++,
      },
    },
  };
});

const $ = (s: string) => document.querySelector(s) as HTMLElement;

describe("the context meter", () => {
  it("explains an empty conversation's use: the instructions and the tools, with numbers", async () => {
    info = { tokens: 2331, window: 8192, limit: 6144, source: "server", compactions: 0, system: 1100, tools: 1231, tool_count: 14, compactable: false };
    const refresh = mountContext($("#conn"), () => {});
    refresh("s1");
    await flush();
    const meter = $("#ctx-meter");
    expect(meter.textContent).toBe("28% context");
    expect($("#ctx-detail").hidden).toBe(true);
    meter.click();
    expect($("#ctx-detail").hidden).toBe(false);
    expect(meter.getAttribute("aria-expanded")).toBe("true");
    const text = $("#ctx-detail").textContent!;
    expect(text).toContain("about 2,331 of the model's 8,192 tokens (28%)");
    expect(text).toContain("the assistant's instructions (about 1,100 tokens) and the descriptions of its 14 tools (about 1,231): about 2,331 before the first message");
    expect(text).toContain("The messages take about 0.");
    $("#outside").click();
    expect($("#ctx-detail").hidden).toBe(true);
  });

  it("disables Compact with the reason when there is nothing to compact, and enables it when there is", async () => {
    info = { tokens: 2331, window: 8192, limit: 6144, source: "server", compactions: 0, system: 1100, tools: 1231, tool_count: 14, compactable: false };
    const refresh = mountContext($("#conn"), () => {});
    refresh("s1");
    await flush();
    const compact = $("#compact") as HTMLButtonElement;
    expect(compact.hidden).toBe(false);
    expect(compact.disabled).toBe(true);
    expect(compact.title).toMatch(/^Nothing to compact yet/);
    compact.click();
    await flush();
    expect(compacted).toBe(0);
    info = { ...info, tokens: 5200, compactable: true };
    refresh("s1");
    await flush();
    expect(compact.disabled).toBe(false);
    compact.click();
    await flush();
    await flush();
    expect(compacted).toBe(1);
  });
});
