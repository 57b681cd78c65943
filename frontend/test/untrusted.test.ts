import { describe, expect, it } from "vitest";
import { ruleText, untrustedWarning, type Prompt } from "../src/prompt";
import { Transcript } from "../src/transcript";
import { toolCard } from "../src/views/conversation";

const prompt = (over: Partial<Prompt> = {}): Prompt => ({
  id: "prompt_1", tool_call_id: "tc_1", tool: "open_url", risk: "risky", reason: "r",
  choices: ["once", "deny"], deadline: new Date(Date.now() + 60000).toISOString(), arguments: {}, ...over,
});
const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });

describe("untrusted content in the conversation", () => {
  it("the prompt names what was read and where the data would go, as text", () => {
    const w = untrustedWarning(prompt({ untrusted: ["the result of read_file (<b>page</b>)"], destination: "the site evil.example (data in the address)" }))!;
    expect(w.getAttribute("role")).toBe("alert");
    expect(w.textContent).toContain("This could send your data out.");
    expect(w.querySelector("li")!.textContent).toBe("the result of read_file (<b>page</b>)");
    expect(w.querySelector("b")).toBeNull();
    expect(w.textContent).toContain("would send data to the site evil.example");
  });

  it("a call that sends nothing out only says what was read; a clean conversation says nothing", () => {
    const quiet = untrustedWarning(prompt({ untrusted: ["a message from agent helper"] }))!;
    expect(quiet.classList.contains("quiet")).toBe(true);
    expect(quiet.textContent).not.toContain("send your data out");
    expect(untrustedWarning(prompt())).toBeUndefined();
  });

  it("the card carries the badge live and after a restart, from the audit row's reason", () => {
    const live = new Transcript();
    live.apply(ev(1, "tool.request", { id: "c1", name: "open_url", arguments: { url: "https://x/?q=1" }, turn_id: "t1",
      untrusted: [{ kind: "agent", name: "helper", label: "a message from agent helper" }] }));
    const card = toolCard(live.items.find((i) => i.key === "tool-c1")!);
    const badge = card.querySelector(".badge.untrusted")!;
    expect(badge.textContent).toBe("after untrusted content");
    expect(badge.getAttribute("title")).toContain("a message from agent helper");

    const reloaded = new Transcript();
    reloaded.apply(ev(1, "tool.request", { id: "c1", name: "open_url", arguments: {}, turn_id: "t1" }));
    reloaded.restoreDecisions([{ toolCallId: "c1", class: "risky", decision: "denied", decidedBy: "headless",
      reason: "opens a page; policy rule: allow open_url; after untrusted content from a message from agent helper; it would send data to the site x" }]);
    const again = toolCard(reloaded.items.find((i) => i.key === "tool-c1")!);
    expect(again.querySelector(".badge.untrusted")!.getAttribute("title")).toContain("a message from agent helper");
  });

  it("a rule that holds with untrusted content says so in words", () => {
    expect(ruleText({ tool: "clipboard_write", action: "allow", untrusted: true })).toBe("Allow clipboard_write (any arguments), also after untrusted content");
    expect(ruleText({ tool: "clipboard_write", action: "allow" })).toBe("Allow clipboard_write (any arguments)");
  });
});
