import { describe, expect, it } from "vitest";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
const shown = (t: Transcript) => t.items.map((i) => [i.kind, i.text.trim()]);

// A task's run that waited for an approval goes on, after a restart, in a
// turn of its own that begins with a status line (no user message): the
// line stays with the turn while it streams, as it does after a reload.
describe("a resumed turn", () => {
  it("keeps its opening status line live as after a reload, and the allowed call's real result", () => {
    const line = "Resumed: the call that waited for approval was allowed.";
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "Summarise yesterday's notes into today's note.", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "write_file", arguments: { path: "notes/today.md" }, turn_id: "t1" }));
    t.apply(ev(3, "tool.result", { id: "c1", ok: false, result: "not completed: Jarvis stopped", turn_id: "t1" }));
    t.apply(ev(4, "error", { code: "interrupted", message: "The service stopped while this turn was running; send the message again to retry.", turn_id: "t1" }));
    t.apply(ev(5, "status", { text: line, kind: "resumed", turn_id: "t2" }));
    t.apply(ev(6, "tool.result", { id: "c1", ok: true, result: "wrote notes/today.md", turn_id: "t2" }));
    t.apply(ev(7, "assistant.delta", { text: "Today's note has yesterday's summary.", turn_id: "t2" }));
    t.apply(ev(8, "assistant.final", { text: "Today's note has yesterday's summary.", turn_id: "t2" }));
    expect(shown(t)).toEqual([
      ["user", "Summarise yesterday's notes into today's note."],
      ["tool", ""],
      ["error", "The service stopped while this turn was running; send the message again to retry."],
      ["status", line],
      ["assistant", "Today's note has yesterday's summary."],
    ]);
    const card = t.items.find((i) => i.kind === "tool")!.tool!;
    expect([card.ok, card.result]).toEqual([true, "wrote notes/today.md"]);

    const r = new Transcript();
    r.load([
      { id: 1, role: "user", text: "Summarise yesterday's notes into today's note.", turnId: "t1" },
      { id: 2, role: "assistant", text: "", turnId: "t1", toolCalls: [{ id: "c1", function: { name: "write_file", arguments: '{"path":"notes/today.md"}' } }] },
      { id: 3, role: "tool", toolCallId: "c1", text: "wrote notes/today.md", turnId: "t1", meta: { ok: true } },
      { id: 4, role: "status", text: "The service stopped while this turn was running; send the message again to retry.", turnId: "t1", meta: { kind: "error", code: "interrupted" } },
      { id: 5, role: "status", text: line, turnId: "t2", meta: { kind: "resumed" } },
      { id: 6, role: "assistant", text: "Today's note has yesterday's summary.", turnId: "t2" },
    ]);
    expect(shown(r)).toEqual(shown(t));
  });
});
