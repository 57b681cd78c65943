import { describe, expect, it } from "vitest";
import { compactedLine, meterText } from "../src/context";
import { Transcript } from "../src/transcript";

describe("context meter", () => {
  it("shows the share of the window and says when it is past the budget", () => {
    const m = meterText({ tokens: 2048, window: 8192, limit: 6144, source: "server", compactions: 2 });
    expect(m.text).toBe("25% context");
    expect(m.level).toBe("ok");
    expect(m.title).toContain("2,048 of 8,192 tokens (window from server)");
    expect(m.title).toContain("Compacted 2 times.");
    expect(meterText({ tokens: 5000, window: 8192, limit: 6144, source: "model", compactions: 0 }).level).toBe("high");
    expect(meterText({ tokens: 7000, window: 8192, limit: 6144, source: "model", compactions: 0 }).level).toBe("full");
    expect(meterText({ tokens: 9000, window: 8192, limit: 6144, source: "model", compactions: 0 }).text).toBe("100% context");
  });

  it("adds a kept status line for session.compacted, between the user's message and the reply", () => {
    const t = new Transcript();
    t.apply({ id: "1", type: "user.message", data: { text: "hi", turn_id: "t1" } });
    const eff = t.apply({ id: "2", type: "session.compacted", data: { messages: 12, tokens_before: 6200, tokens_after: 2100, reason: "budget", turn_id: "t1" } });
    expect(eff.changed).toEqual(["cmp-2"]);
    t.apply({ id: "3", type: "assistant.delta", data: { text: "Hello", turn_id: "t1" } });
    t.apply({ id: "4", type: "assistant.final", data: { text: "Hello", turn_id: "t1" } });
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([
      ["user", "hi"],
      ["status", compactedLine({ messages: 12, tokens_before: 6200, tokens_after: 2100, reason: "budget" })],
      ["assistant", "Hello"],
    ]);
    expect(t.items[1].text).toBe("Conversation compacted (to stay within the model's window): 12 earlier messages summarized, about 6,200 → 2,100 tokens. The full transcript is kept.");
  });
});

describe("compaction lines on reload", () => {
  it("puts each compaction after the last message it summarized, the transcript whole", () => {
    const t = new Transcript();
    const msgs = [
      { id: 1, role: "user", text: "one", turnId: "t1" },
      { id: 2, role: "assistant", text: "", turnId: "t1", toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }] },
      { id: 3, role: "tool", text: "file", toolCallId: "c1", turnId: "t1" },
      { id: 4, role: "assistant", text: "done", turnId: "t1" },
      { id: 5, role: "user", text: "two", turnId: "t2" },
      { id: 6, role: "assistant", text: "ok", turnId: "t2" },
    ];
    t.load(msgs, [], [{ summary_id: 9, upto_message_id: 3, messages: 3, tokens_before: 900, tokens_after: 300, reason: "budget" }]);
    expect(t.items.map((i) => [i.kind, i.kind === "status" ? i.text.slice(0, 24) : i.text])).toEqual([
      ["user", "one"],
      ["tool", ""],
      ["status", "Conversation compacted ("],
      ["assistant", "done"],
      ["user", "two"],
      ["assistant", "ok"],
    ]);
    expect(t.get("cmp-s9")?.text).toContain("3 earlier messages summarized");
  });
});
