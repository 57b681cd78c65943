// The transcript model of versions and branches (Regenerate, Retry, Edit),
// the turn-end lines a reload brings back, and the Markdown export's tool
// lines after a reload.
import { describe, expect, it } from "vitest";
import { conversationMarkdown } from "../src/export";
import { Transcript } from "../src/transcript";

const history = [
  { id: 1, role: "user", text: "Write a file", turnId: "t1" },
  { id: 2, role: "assistant", text: "", turnId: "t1", toolCalls: [{ id: "tc_1", type: "function", function: { name: "write_file", arguments: '{"path":"a.txt","content":"x"}' } }] },
  { id: 3, role: "tool", text: "Tool call not completed: denied by the user", turnId: "t1", toolCallId: "tc_1" },
  { id: 4, role: "assistant", text: "It was denied, so I stop.", turnId: "t1" },
  { id: 5, role: "user", text: "Tell me a long story", turnId: "t2" },
  { id: 6, role: "assistant", text: "Once upon a", turnId: "t2", meta: { partial: true } },
  { id: 7, role: "status", text: "Stopped: the turn was cancelled.", turnId: "t2", meta: { kind: "stopped", code: "cancelled" } },
  { id: 8, role: "user", text: "Again?", turnId: "t3" },
  { id: 9, role: "status", text: "the model's stream ended before it finished (no finish_reason)", turnId: "t3", meta: { kind: "error", code: "upstream_malformed" } },
];

describe("a transcript after a restart", () => {
  it("keeps how each turn ended: Stopped. and the error, each with its turn", () => {
    const t = new Transcript();
    t.load(history);
    const kinds = t.items.map((it) => `${it.kind}:${it.turnId ?? ""}`);
    expect(kinds).toEqual(["user:t1", "tool:t1", "assistant:t1", "user:t2", "assistant:t2", "stopped:t2", "user:t3", "error:t3"]);
    expect(t.items[5].text).toBe("Stopped.");
    expect(t.items[7].code).toBe("upstream_malformed");
  });

  it("puts the audit log's decision on the card of the same call id, and the export says it", () => {
    const t = new Transcript();
    t.load(history);
    t.restoreDecisions([{ toolCallId: "tc_1", proposedRisk: "medium", class: "medium", decision: "denied", decidedBy: "user" }]);
    const card = t.get("tool-tc_1")!.tool!;
    expect([card.decision, card.decidedBy, card.risk]).toEqual(["denied", "user", "medium"]);
    const md = conversationMarkdown("Files", t.items, "General");
    expect(md).toContain("**Tool `write_file`** (denied by user, risk: medium)");
    expect(md).not.toContain("()");
  });

  it("writes no empty () for a card whose decision is not known", () => {
    const t = new Transcript();
    t.load(history.slice(0, 3));
    expect(conversationMarkdown("Files", t.items, "General")).toContain("**Tool `write_file`**\n");
  });
});

describe("versions and branches", () => {
  it("marks the user message of a turn that has versions with its place among them", () => {
    const t = new Transcript();
    t.load(history, [], [], [{ shown: "t3", turns: ["t3", "t4"] }]);
    const users = t.items.filter((it) => it.kind === "user");
    expect(users.map((u) => u.versions)).toEqual([undefined, undefined, { turns: ["t3", "t4"], shown: 0 }]);
  });

  it("a new version of a turn takes its place: the turn and all after it leave, the message shows once", () => {
    const t = new Transcript();
    t.load(history);
    const eff = t.replaceTurn("t2", "Tell me a short story");
    expect(t.items.map((it) => it.kind)).toEqual(["user", "tool", "assistant", "user"]);
    expect(t.items.at(-1)!.text).toBe("Tell me a short story");
    expect(eff.removed).toEqual(["m-5", "m-6", "m-7", "m-8", "m-9"]);
    expect(t.running).toBe(true);
    // The echo of the new turn's message is the same message, not a second one.
    t.apply({ id: "20", type: "user.message", data: { text: "Tell me a short story", turn_id: "t5" } });
    expect(t.items.filter((it) => it.kind === "user").map((it) => it.turnId)).toEqual(["t1", "t5"]);
    expect(t.turnOf(t.items.at(-1)!.key)).toEqual({ turnId: "t5", text: "Tell me a short story" });
  });
});
