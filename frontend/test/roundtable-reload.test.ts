// Round-table cards after a transcript reload (switching sessions, a
// restart): the stored messages keep only a round table's Markdown, the app
// reads the runs back (app.RoundtableCard) and Transcript.load lays the cards
// out where the stream showed them live.
import { beforeAll, describe, expect, it } from "vitest";
import type { RoundtableInfo } from "../src/bridge";
import { loadMarkdown } from "../src/reply";
import { progressCard, resultCard, roundTableCard } from "../src/roundtable";
import { storedRoundTable, Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
const EVIL = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;

function inert(el: HTMLElement): void {
  expect(el.querySelector("img,script,iframe,svg,object")).toBeNull();
  expect(el.innerHTML).not.toMatch(/<img|<script/i);
}

const result = {
  status: "completed", outcome: "split", summary: "2 of 2 agent(s) analysed; split",
  recommended_direction: "Use parameterized queries " + EVIL,
  key_findings: [{ agent_name: "security", finding: "SQL built by concatenation " + EVIL, evidence: "[INDICATED: task_content] '+'", evidence_level: "indicated", severity: "critical", confidence: 0.9, supported_by: [], challenged_by: [] }],
  challenges: [{ agent: "performance", target_agent: "security", finding_challenged: "Error pages echo raw input", counter_evidence: "escaped " + EVIL }],
  concessions: [{ agent: "security", target_agent: "performance", finding_accepted: "N+1", reason: "visible in the task" }],
  votes: [
    { agent_name: "security", approve: true, conditions: ["Parameterize every query"] },
    { agent_name: "performance", approve: false, conditions: [], dissent_reason: "Batching first " + EVIL },
  ],
  tally: { approve: 1, dissent: 1, missing: 0 },
};
const MD = "# Round table\n\nAddress 1 critical finding first. " + EVIL;

const run = (over: Partial<RoundtableInfo> = {}): RoundtableInfo => ({
  runId: "rt_1", turnId: "t1", source: "agent", status: "completed", outcome: "split", summary: result.summary,
  participants: ["security", "performance"], createdAt: "2026-01-01T10:00:01Z", result, markdown: MD, ...over,
});

// The same round-table agent turn, live (stream events) ...
function live(): Transcript {
  const t = new Transcript();
  t.apply(ev(1, "user.message", { text: "Review this handler", turn_id: "t1" }));
  t.apply(ev(2, "roundtable.progress", { run_id: "rt_1", turn_id: "t1", type: "started", participants: ["security", "performance"], message: "go" }));
  t.apply(ev(3, "roundtable.progress", { run_id: "rt_1", turn_id: "t1", type: "phase_started", phase: "analyze", waiting_for: ["security", "performance"], message: "analyze" }));
  t.apply(ev(4, "roundtable.result", { run_id: "rt_1", turn_id: "t1", status: "completed", outcome: "split", summary: result.summary, markdown: MD, result: JSON.stringify(result) }));
  t.apply(ev(5, "assistant.delta", { text: MD, turn_id: "t1" }));
  t.apply(ev(6, "assistant.final", { text: MD, turn_id: "t1" }));
  return t;
}

// ... and as GET /v1/sessions/{id}/messages stores it.
const agentMessages = [
  { id: 1, role: "user", text: "Review this handler", turnId: "t1", createdAt: "2026-01-01T10:00:00Z" },
  { id: 2, role: "assistant", text: MD, turnId: "t1", meta: { roundtable_run_id: "rt_1" }, createdAt: "2026-01-01T10:00:09Z" },
];

beforeAll(async () => {
  await loadMarkdown();
});

describe("round tables after a transcript reload", () => {
  it("lays a round-table agent's result out as the card the stream showed, not as its Markdown", () => {
    const l = live();
    const t = new Transcript();
    t.load(agentMessages, [run()]);
    expect(t.items.map((i) => [i.kind, i.key])).toEqual([["user", "m-1"], ["roundtable", "rt-rt_1"]]);
    expect(l.items.map((i) => [i.kind, i.key])).toEqual([["user", "e-1"], ["roundtable", "rt-rt_1"]]);
    const card = roundTableCard(t.get("rt-rt_1")!.rt!);
    inert(card);
    // Findings, challenges and votes, laid out exactly as live.
    expect(card.outerHTML).toBe(resultCard(l.get("rt-rt_1")!.rt!).outerHTML);
    expect(card.dataset.state).toBe("completed");
    expect(card.querySelectorAll(".rt-finding")).toHaveLength(1);
    expect(card.querySelector(".rt-challenge")!.textContent).toContain("performance → security");
    expect(card.querySelector(".rt-concession")!.textContent).toContain("visible in the task");
    expect(card.querySelectorAll(".rt-vote")).toHaveLength(2);
    expect(card.querySelector(".rt-vote.dissent")!.textContent).toContain("reason: Batching first <img");
    expect(card.querySelector(".rt-head")!.textContent).toContain("1 approve · 1 dissent");
    expect(card.querySelector(".rt-markdown h1")!.textContent).toBe("Round table");
  });

  it("takes the result as JSON text or as an object", () => {
    const a = storedRoundTable(run({ result: JSON.stringify(result) }));
    const b = storedRoundTable(run());
    expect(a.done && b.done).toBe(true);
    expect(a.result).toEqual(b.result);
    expect(storedRoundTable(run({ result: "not json" })).result).toBeUndefined();
  });

  it("does not show the reply twice when the stream repeats the result after the reload", () => {
    const t = new Transcript();
    t.load(agentMessages, [run()]);
    t.apply(ev(7, "roundtable.result", { run_id: "rt_1", turn_id: "t1", status: "completed", outcome: "split", summary: result.summary, markdown: MD, result }));
    t.apply(ev(8, "assistant.delta", { text: MD.slice(0, 10), turn_id: "t1" }));
    t.apply(ev(9, "assistant.final", { text: MD, turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "roundtable"]);
  });

  it("keeps the Markdown reply when its run could not be read", () => {
    const t = new Transcript();
    t.load(agentMessages, []);
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "Review this handler"], ["assistant", MD]]);
  });

  it("shows a run still going as a progress card after its message; the stream completes it", () => {
    const t = new Transcript();
    t.load([agentMessages[0]], [run({ status: "running", result: undefined, markdown: undefined, outcome: undefined, summary: undefined })]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "roundtable"]);
    const it = t.get("rt-rt_1")!;
    expect(it.rt!.done).toBe(false);
    const card = roundTableCard(it.rt!);
    expect(card.classList.contains("rt-progress")).toBe(true);
    expect(card.textContent).toContain("Participants: security, performance");
    t.apply(ev(10, "roundtable.progress", { run_id: "rt_1", turn_id: "t1", type: "agent_responded", phase: "vote", agent: "security", message: "voted" }));
    expect(progressCard(it.rt!).querySelector('[data-phase="vote"]')!.textContent).toContain("1");
    const eff = t.apply(ev(11, "roundtable.result", { run_id: "rt_1", turn_id: "t1", status: "completed", outcome: "split", summary: result.summary, markdown: MD, result }));
    expect(eff.changed).toEqual(["rt-rt_1"]);
    expect(t.items).toHaveLength(2);
    expect(roundTableCard(it.rt!).classList.contains("rt-result")).toBe(true);
  });

  it("puts a round_table tool's card before the call's card, as live", () => {
    const msgs = [
      { id: 1, role: "user", text: "Ask the council", turnId: "t2", createdAt: "2026-01-01T11:00:00Z" },
      { id: 2, role: "assistant", text: "", turnId: "t2", toolCalls: [{ id: "call_1", type: "function", function: { name: "round_table", arguments: '{"task":"review"}' } }], createdAt: "2026-01-01T11:00:01Z" },
      { id: 3, role: "tool", text: MD, toolCallId: "call_1", turnId: "t2", createdAt: "2026-01-01T11:00:20Z" },
      { id: 4, role: "assistant", text: "The council was split.", turnId: "t2", createdAt: "2026-01-01T11:00:21Z" },
    ];
    const t = new Transcript();
    t.load(msgs, [run({ runId: "rt_tool", turnId: "t2", source: "tool", createdAt: "2026-01-01T11:00:02Z" })]);
    expect(t.items.map((i) => [i.kind, i.key])).toEqual([["user", "m-1"], ["roundtable", "rt-rt_tool"], ["tool", "tool-call_1"], ["assistant", "m-4"]]);
    expect(t.get("tool-call_1")!.tool!.result).toBe(MD);
    // Live, the same turn ends up in the same order.
    const l = new Transcript();
    l.apply(ev(1, "user.message", { text: "Ask the council", turn_id: "t2" }));
    l.apply(ev(2, "roundtable.progress", { run_id: "rt_tool", turn_id: "t2", type: "started", participants: ["security"], message: "go" }));
    l.apply(ev(3, "roundtable.result", { run_id: "rt_tool", turn_id: "t2", status: "completed", markdown: MD, result }));
    l.apply(ev(4, "tool.result", { id: "tc_1", ok: true, result: MD, source: "service", name: "round_table", arguments: { task: "review" }, turn_id: "t2" }));
    l.apply(ev(5, "assistant.final", { text: "The council was split.", turn_id: "t2" }));
    expect(l.items.map((i) => i.kind)).toEqual(t.items.map((i) => i.kind));
  });

  it("matches two round_table calls of one turn to their runs by their results", () => {
    const md2 = "# Second\n\nother";
    const msgs = [
      { id: 1, role: "user", text: "Two councils", turnId: "t3", createdAt: "2026-01-01T12:00:00Z" },
      { id: 2, role: "assistant", text: "", turnId: "t3", createdAt: "2026-01-01T12:00:01Z", toolCalls: [
        { id: "a", function: { name: "round_table", arguments: "{}" } },
        { id: "b", function: { name: "round_table", arguments: "{}" } },
      ] },
      { id: 3, role: "tool", text: MD, toolCallId: "a", turnId: "t3" },
      { id: 4, role: "tool", text: md2, toolCallId: "b", turnId: "t3" },
    ];
    // Concurrent calls: the second call's run was created first.
    const runs = [
      run({ runId: "rt_b", turnId: "t3", source: "tool", markdown: md2, createdAt: "2026-01-01T12:00:02Z" }),
      run({ runId: "rt_a", turnId: "t3", source: "tool", createdAt: "2026-01-01T12:00:03Z" }),
    ];
    const t = new Transcript();
    t.load(msgs, runs);
    expect(t.items.map((i) => i.key)).toEqual(["m-1", "rt-rt_a", "tool-a", "rt-rt_b", "tool-b"]);
  });

  it("places a run no message names after its turn's message, or by time", () => {
    const msgs = [
      { id: 1, role: "user", text: "first", turnId: "t1", createdAt: "2026-01-01T09:00:00Z" },
      { id: 2, role: "assistant", text: "reply", turnId: "t1", createdAt: "2026-01-01T09:00:05Z" },
      { id: 3, role: "user", text: "review", turnId: "t4", createdAt: "2026-01-01T10:00:00Z" },
      { id: 4, role: "status", text: "Stopped: the round table was cancelled.", turnId: "t4", meta: { kind: "error" }, createdAt: "2026-01-01T10:00:30Z" },
      { id: 5, role: "user", text: "later", turnId: "t5", createdAt: "2026-01-01T12:00:00Z" },
    ];
    const runs = [
      // Started through POST /v1/roundtables: no turn.
      run({ runId: "rt_api", turnId: undefined, source: "api", createdAt: "2026-01-01T11:00:00Z" }),
      // A cancelled agent run: no reply names it.
      run({ runId: "rt_cancelled", turnId: "t4", status: "cancelled", outcome: undefined, result: undefined, markdown: undefined, createdAt: "2026-01-01T10:00:01Z" }),
    ];
    const t = new Transcript();
    t.load(msgs, runs);
    expect(t.items.map((i) => i.key)).toEqual(["m-1", "m-2", "m-3", "rt-rt_cancelled", "m-4", "rt-rt_api", "m-5"]);
    expect(roundTableCard(t.get("rt-rt_cancelled")!.rt!).textContent).toContain("cancelled");
    const late = new Transcript();
    late.load(msgs.slice(0, 2), [run({ runId: "rt_api", turnId: undefined, source: "api", createdAt: "2026-01-01T11:00:00Z" })]);
    expect(late.items.map((i) => i.key)).toEqual(["m-1", "m-2", "rt-rt_api"]);
  });

  it("shows a round table exactly once even if the service lists it twice", () => {
    const t = new Transcript();
    t.load(agentMessages, [run(), run()]);
    expect(t.items.map((i) => i.key)).toEqual(["m-1", "rt-rt_1"]);
  });
});
