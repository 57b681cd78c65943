import { describe, expect, it } from "vitest";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
const shown = (t: Transcript) => t.items.map((i) => [i.kind, i.text.trim()]);

// A task's run that waited for an approval goes on, after a restart, in a
// turn of its own that begins with a status line (no user message): the
// line stays with the turn while it streams, as it does after a reload; the
// stopped turn before it ends with a plain line, not an error with Retry.
describe("a resumed turn", () => {
  it("keeps its opening status line live as after a reload, and the allowed call's real result", () => {
    const line = "Resumed: the call that waited for approval was allowed.";
    // How the first turn ended: not an error to retry (code run_waiting), a line.
    const waiting = "Jarvis stopped while this run waited for your approval. The call waits in the Inbox: the run goes on from it once you allow it; denied or expired, the run ends there.";
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "Summarise yesterday's notes into today's note.", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "write_file", arguments: { path: "notes/today.md" }, turn_id: "t1" }));
    t.apply(ev(3, "tool.result", { id: "c1", ok: false, result: "not completed: Jarvis stopped", turn_id: "t1" }));
    t.apply(ev(4, "error", { code: "run_waiting", message: waiting, turn_id: "t1" }));
    t.apply(ev(5, "status", { text: line, kind: "resumed", turn_id: "t2" }));
    t.apply(ev(6, "tool.result", { id: "c1", ok: true, result: "wrote notes/today.md", turn_id: "t2" }));
    t.apply(ev(7, "assistant.delta", { text: "Today's note has yesterday's summary.", turn_id: "t2" }));
    t.apply(ev(8, "assistant.final", { text: "Today's note has yesterday's summary.", turn_id: "t2" }));
    expect(shown(t)).toEqual([
      ["user", "Summarise yesterday's notes into today's note."],
      ["tool", ""],
      ["status", waiting],
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
      { id: 4, role: "status", text: waiting, turnId: "t1", meta: { kind: "error", code: "run_waiting" } },
      { id: 5, role: "status", text: line, turnId: "t2", meta: { kind: "resumed" } },
      { id: 6, role: "assistant", text: "Today's note has yesterday's summary.", turnId: "t2" },
    ]);
    expect(shown(r)).toEqual(shown(t));
  });
});
