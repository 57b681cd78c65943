import { describe, expect, it } from "vitest";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });

// The service's assistant.final carries the whole turn's text (every step's
// deltas, steps joined by a blank line); the text before a tool call is
// already shown above the card and must not show again below it.
describe("a turn with tool calls", () => {
  it("shows the text before a tool call once, while streaming as after a reload", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "make notes", turn_id: "t1" }));
    t.apply(ev(2, "assistant.delta", { text: "I'll write ", turn_id: "t1" }));
    t.apply(ev(3, "assistant.delta", { text: "the file.", turn_id: "t1" }));
    t.apply(ev(4, "tool.request", { id: "c1", name: "write_file", arguments: { path: "n.txt" }, turn_id: "t1" }));
    t.apply(ev(5, "tool.result", { id: "c1", ok: true, result: "wrote", turn_id: "t1" }));
    t.apply(ev(6, "assistant.delta", { text: "\n\n", turn_id: "t1" }));
    t.apply(ev(7, "assistant.delta", { text: "Done.", turn_id: "t1" }));
    const fin = t.apply(ev(8, "assistant.final", { text: "I'll write the file.\n\nDone.", turn_id: "t1" }));
    expect(t.items.map((i) => [i.kind, i.text.trim()])).toEqual([["user", "make notes"], ["assistant", "I'll write the file."], ["tool", ""], ["assistant", "Done."]]);
    expect(fin.finished).toEqual({ text: "Done." });

    const r = new Transcript();
    r.load([
      { id: 1, role: "user", text: "make notes", turnId: "t1" },
      { id: 2, role: "assistant", text: "I'll write the file.", turnId: "t1", toolCalls: [{ id: "c1", function: { name: "write_file", arguments: '{"path":"n.txt"}' } }] },
      { id: 3, role: "tool", toolCallId: "c1", text: "wrote", turnId: "t1" },
      { id: 4, role: "assistant", text: "Done.", turnId: "t1" },
    ]);
    expect(r.items.map((i) => [i.kind, i.text.trim()])).toEqual(t.items.map((i) => [i.kind, i.text.trim()]));
  });

  it("handles two tool steps, and a final that does not repeat the earlier parts", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "go", turn_id: "t1" }));
    t.apply(ev(2, "assistant.delta", { text: "A", turn_id: "t1" }));
    t.apply(ev(3, "tool.request", { id: "c1", name: "list_dir", arguments: {}, turn_id: "t1" }));
    t.apply(ev(4, "assistant.delta", { text: "\n\nB", turn_id: "t1" }));
    t.apply(ev(5, "tool.request", { id: "c2", name: "list_dir", arguments: {}, turn_id: "t1" }));
    t.apply(ev(6, "assistant.delta", { text: "\n\nC", turn_id: "t1" }));
    t.apply(ev(7, "assistant.final", { text: "A\n\nB\n\nC", turn_id: "t1" }));
    expect(t.items.filter((i) => i.kind === "assistant").map((i) => i.text.trim())).toEqual(["A", "B", "C"]);
    const u = new Transcript();
    u.apply(ev(1, "user.message", { text: "go", turn_id: "t1" }));
    u.apply(ev(2, "assistant.delta", { text: "Only", turn_id: "t1" }));
    u.apply(ev(3, "assistant.final", { text: "Only text", turn_id: "t1" }));
    expect(u.items.at(-1)!.text).toBe("Only text");
  });
});

describe("a tool result with secrets removed", () => {
  it("marks the card, from the gate's decision and from the service's event alike", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "read it", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "read_file", arguments: { path: "a.txt" }, turn_id: "t1" }));
    t.apply(ev(3, "tool.result", { id: "c1", ok: true, result: "key [redacted]", redacted: true, turn_id: "t1" }));
    const card = t.items.find((i) => i.kind === "tool")!.tool!;
    expect(card.redacted).toBe(true);
    expect(card.result).toBe("key [redacted]");

    const d = new Transcript();
    d.decide({ callId: "c2", tool: "read_file", arguments: {}, class: "safe", decision: "allowed", decidedBy: "policy", ok: true, result: "key [redacted]", redacted: true });
    expect(d.items.find((i) => i.kind === "tool")!.tool!.redacted).toBe(true);
  });
});
