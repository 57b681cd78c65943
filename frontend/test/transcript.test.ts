import { describe, expect, it } from "vitest";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });

describe("Transcript", () => {
  it("streams deltas into one reply and finalizes it", () => {
    const t = new Transcript();
    t.localUser("hi");
    t.apply(ev(1, "user.message", { text: "hi", turn_id: "t1" }));
    t.apply(ev(2, "assistant.delta", { text: "Hel", turn_id: "t1" }));
    const eff = t.apply(ev(3, "assistant.delta", { text: "lo", turn_id: "t1" }));
    expect(eff.changed).toHaveLength(1);
    expect(t.running).toBe(true);
    const fin = t.apply(ev(4, "assistant.final", { text: "Hello", turn_id: "t1" }));
    expect(fin.finished).toEqual({ text: "Hello" });
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "hi"], ["assistant", "Hello"]]);
    expect(t.running).toBe(false);
  });

  it("replaces the 'Sent to external agent' status with the reply", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "ping", turn_id: "t1" }));
    t.apply(ev(2, "status", { text: "Sent to external agent", kind: "sent", turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "status"]);
    const eff = t.apply(ev(3, "assistant.final", { text: "pong" }));
    expect(eff.removed).toHaveLength(1);
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "ping"], ["assistant", "pong"]]);
  });

  it("keeps the status line when the external turn ends with it, until the reply", () => {
    const t = new Transcript();
    t.localUser("ping");
    t.apply(ev(1, "user.message", { text: "ping", turn_id: "t1" }));
    t.apply(ev(2, "status", { text: "Sent to external agent", kind: "external.sent", turn_id: "t1" }));
    t.apply(ev(3, "assistant.final", { text: "Sent to external agent", turn_id: "t1", kind: "status" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "ping"], ["status", "Sent to external agent"]]);
    expect(t.running).toBe(false);
    t.apply(ev(4, "assistant.final", { text: "pong <b>x</b>", turn_id: "t9", origin: "external" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "ping"], ["assistant", "pong <b>x</b>"]]);
  });

  it("replaces the status line with an error line when forwarding fails", () => {
    const t = new Transcript();
    t.apply(ev(1, "status", { text: "Sent to external agent", kind: "sent" }));
    t.apply(ev(2, "error", { code: "forward_failed", message: "the agent did not answer" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["error", "the agent did not answer"]]);
    t.apply(ev(3, "status", { text: "Sent to external agent", kind: "sent" }));
    t.apply(ev(4, "status", { text: "Forward failed: 502", kind: "forward_failed" }));
    expect(t.items.map((i) => i.kind)).toEqual(["error", "error"]);
  });

  it("tracks a tool call from request to result and decision", () => {
    const t = new Transcript();
    t.apply(ev(1, "assistant.delta", { text: "Let me check", turn_id: "t1" }));
    t.apply(ev(2, "tool.request", { id: "c1", name: "write_file", arguments: { path: "a" }, risk: "risky", turn_id: "t1" }));
    const card = t.get("tool-c1")!;
    expect(card.tool!.pending).toBe(true);
    t.decide({ callId: "c1", tool: "write_file", arguments: { path: "a" }, class: "risky", decision: "allowed", decidedBy: "user", ok: true, result: "wrote 1 byte" });
    t.apply(ev(3, "tool.result", { id: "c1", ok: true, result: "wrote 1 byte" }));
    expect(card.tool).toMatchObject({ decision: "allowed", decidedBy: "user", ok: true, result: "wrote 1 byte", pending: false });
    t.apply(ev(4, "assistant.delta", { text: "Done", turn_id: "t1" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["assistant", "Let me check"], ["tool", ""], ["assistant", "Done"]]);
  });

  it("does not duplicate the user's message when the service echoes it", () => {
    const t = new Transcript();
    t.localUser("same");
    t.apply(ev(1, "user.message", { text: "same", turn_id: "t1" }));
    expect(t.items.filter((i) => i.kind === "user")).toHaveLength(1);
    t.apply(ev(2, "user.message", { text: "from elsewhere", turn_id: "t2" }));
    expect(t.items.filter((i) => i.kind === "user")).toHaveLength(2);
  });

  it("shows cancellation as a stopped line and ends the turn", () => {
    const t = new Transcript();
    t.localUser("go");
    t.apply(ev(1, "assistant.delta", { text: "w0 ", turn_id: "t1" }));
    t.apply(ev(2, "error", { code: "cancelled", message: "cancelled by the user", turn_id: "t1" }));
    expect(t.items.at(-1)).toMatchObject({ kind: "stopped", text: "Stopped." });
    expect(t.items[1].final).toBe(true);
    expect(t.running).toBe(false);
  });

  it("keeps an agent's thoughts as a folded item", () => {
    const t = new Transcript();
    t.apply(ev(1, "status", { text: "I should check the calendar", kind: "thought", turn_id: "t1" }));
    t.apply(ev(2, "assistant.final", { text: "Done", turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["thought", "assistant"]);
  });

  it("flags a missing provider and asks for a reload on stream.reset", () => {
    const t = new Transcript();
    expect(t.apply(ev(1, "error", { code: "not_configured", message: "No model provider is configured" })).notConfigured).toBe("No model provider is configured");
    expect(t.apply(ev(2, "stream.reset", { reason: "unknown_last_event_id" })).reload).toBe(true);
  });

  it("keeps the line of a task's run that went on from an allowed call, as a reload shows it", () => {
    const t = new Transcript();
    t.apply(ev(1, "status", { text: "Resumed: the call that waited for approval was allowed.", kind: "resumed", turn_id: "t_2" }));
    t.apply(ev(2, "assistant.delta", { text: "Today's note is written.", turn_id: "t_2" }));
    t.apply(ev(3, "assistant.final", { text: "Today's note is written.", turn_id: "t_2" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["status", "Resumed: the call that waited for approval was allowed."], ["assistant", "Today's note is written."]]);
  });

  it("loads history with tool calls and their results", () => {
    const t = new Transcript();
    t.load([
      { id: 1, role: "user", text: "save" },
      { id: 2, role: "assistant", text: "", toolCalls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: '{"path":"a"}' } }] },
      { id: 3, role: "tool", toolCallId: "c1", text: "wrote 1 byte" },
      { id: 4, role: "assistant", text: "Saved." },
      { id: 5, role: "status", text: "Sent to external agent", meta: { kind: "sent" } },
    ]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "tool", "assistant", "status"]);
    expect(t.get("tool-c1")!.tool).toMatchObject({ name: "write_file", arguments: { path: "a" }, result: "wrote 1 byte", ok: true });
  });
});
