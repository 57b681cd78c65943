import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry, ProxyTestReport } from "../src/bridge";
import { auditDetail, auditTable, discoveredList, modelSize, testReport, upgradeLazyInputs, verifyText } from "../src/panels";
import { loadMarkdown } from "../src/reply";
import { progressCard, resultCard, roundTableCard } from "../src/roundtable";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
const EVIL = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;

function inert(el: HTMLElement): void {
  expect(el.querySelector("img,script,iframe,svg,object")).toBeNull();
  expect(el.innerHTML).not.toMatch(/<img|<script/i);
  for (const x of Array.from(el.querySelectorAll("*"))) {
    for (const a of Array.from(x.attributes)) expect(a.name.startsWith("on") || /javascript:/i.test(a.value)).toBe(false);
  }
}

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: 7, time: "2025-03-02T12:00:00Z", session_id: "s1", tool_call_id: "call_1", tool: "write_file",
  arguments: { path: "note.txt", content: EVIL }, class: "risky", decision: "allowed", decided_by: "user",
  result: "wrote " + EVIL, duration_ms: 12, prev_hash: "a".repeat(64), hash: "b".repeat(64), ...over,
});

// The window loads the Markdown renderer before it shows a session.
beforeAll(async () => {
  await loadMarkdown();
});

describe("audit panel", () => {
  it("makes the date filters date inputs only when the panel opens", () => {
    const form = document.createElement("form");
    form.innerHTML = '<input name="tool" type="text"><input name="since" type="text" data-type="date"><input name="until" type="text" data-type="date">';
    upgradeLazyInputs(form);
    const [tool, since, until] = Array.from(form.querySelectorAll("input"));
    expect(tool.type).toBe("text");
    expect(since.type).toBe("date");
    expect(until.type).toBe("date");
    expect(form.querySelector("[data-type]")).toBeNull();
    upgradeLazyInputs(form); // once is enough; again changes nothing
    expect(since.type).toBe("date");
  });

  it("lists rows with their decision and picks one", () => {
    let picked = 0;
    const [thead, tbody] = auditTable([entry(), entry({ id: 6, tool: "read_file", decision: "denied", class: "forbidden" })], 7, (e) => (picked = e.id));
    expect(thead.textContent).toContain("decided by");
    const rows = tbody.querySelectorAll("tr.audit-row");
    expect(rows).toHaveLength(2);
    expect(rows[0].classList.contains("selected")).toBe(true);
    expect(rows[1].getAttribute("data-decision")).toBe("denied");
    (rows[1] as HTMLElement).click();
    expect(picked).toBe(6);
    expect(auditTable([], undefined, () => {})[1].textContent).toContain("No audit rows match");
  });

  it("names the conversation and opens it, says the time includes the user's decision, folds the hashes", () => {
    let opened = "";
    const [thead, tbody] = auditTable([entry(), entry({ id: 6, session_id: "gone" })], 7, () => {}, { name: (id) => (id === "s1" ? "Garden plans" : undefined), open: (id) => (opened = id) });
    expect(thead.textContent).toContain("incl. your decision");
    const link = tbody.querySelector<HTMLElement>('[data-action="open-session"]')!;
    expect(link.textContent).toBe("Garden plans");
    link.click();
    expect(opened).toBe("s1");
    expect(tbody.querySelectorAll("tr")[1].textContent).toContain("gone"); // unknown: the id
    const d = auditDetail(entry());
    expect(d.querySelector("details.audit-hashes")!.hasAttribute("open")).toBe(false);
    expect(d.textContent).toContain("including the time you took to decide");
  });

  it("shows arguments, result, duration and hashes as text", () => {
    const d = auditDetail(entry({ error: "boom " + EVIL, edited_arguments: { path: "other.txt" } }));
    inert(d);
    expect(d.textContent).toContain('"path": "note.txt"');
    expect(d.textContent).toContain("12 ms");
    expect(d.textContent).toContain("b".repeat(64));
    expect(d.textContent).toContain("other.txt");
    expect(d.textContent).toContain("<script>"); // shown, not run
    expect(auditDetail(undefined).textContent).toContain("Pick a row");
  });

  it("says OK or names the first tampered row", () => {
    expect(verifyText({ ok: true, rows: 3 })).toEqual({ ok: true, text: "Chain OK: 3 rows verified" });
    const bad = verifyText({ ok: false, rows: 2, first_bad_id: 2, reason: "row content does not match its hash: the row was changed" });
    expect(bad.ok).toBe(false);
    expect(bad.text).toContain("row #2");
    expect(verifyText({ ok: true, rows: 1, warnings: ["trigger missing"] }).ok).toBe(false);
    // A broken head anchor names no row.
    expect(verifyText({ ok: false, rows: 3, reason: "the head anchor is missing" }).text).toBe("Chain broken: the head anchor is missing");
  });
});

describe("proxy agent test report", () => {
  const rep: ProxyTestReport = { status: 200, latencyMs: 85, rawResponse: `{"reply":"${EVIL.replace(/"/g, "'")}"}`, parsed: true, output: "Hi " + EVIL, thoughts: ["thinking " + EVIL] };
  it("shows status, latency, parse state, output, thoughts and the raw response inertly", () => {
    const el = testReport(rep);
    inert(el);
    expect(el.dataset.ok).toBe("1");
    expect(el.textContent).toContain("HTTP 200");
    expect(el.textContent).toContain("85 ms");
    expect(el.textContent).toContain("response parsed");
    expect(el.querySelector(".test-output")!.textContent).toContain("Hi <img");
    expect(el.querySelector(".test-thoughts")!.textContent).toContain("thinking");
    expect(el.querySelector(".test-raw")!.textContent).toContain("reply");
  });
  it("reports a failure", () => {
    const el = testReport({ status: 0, latencyMs: 3, rawResponse: "", parsed: false, output: "", error: "connection refused", errorKind: "unreachable" });
    expect(el.dataset.ok).toBe("0");
    expect(el.textContent).toContain("unreachable: connection refused");
    expect(el.textContent).toContain("not parsed");
  });
});

describe("setup form", () => {
  it("offers each discovered model as a one-click choice", () => {
    const picks: string[] = [];
    const el = discoveredList({ configured: false, defaultProvider: "openai", providers: {}, openaiKeyStored: false,
      discovered: [{ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2", EVIL] }] }, (b, m) => picks.push(`${b} ${m}`));
    expect(el.querySelector("img,script")).toBeNull();
    expect(el.querySelectorAll("button.model-choice")[1].textContent).toBe(EVIL); // a model name is text
    const buttons = el.querySelectorAll<HTMLButtonElement>("button.model-choice");
    expect(buttons).toHaveLength(2);
    buttons[0].click();
    expect(picks).toEqual(["http://127.0.0.1:11434/v1 llama3.2"]);
    const none = discoveredList({ configured: false, defaultProvider: "", providers: {}, openaiKeyStored: false, discovered: [] }, () => {});
    expect(none.textContent).toContain("No local model server");
  });
});

describe("model chips", () => {
  it("show each model's size when the server lists it, and nothing made up when it does not", () => {
    const el = discoveredList({ configured: false, defaultProvider: "", providers: {}, openaiKeyStored: false,
      discovered: [{ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2:latest", "nomic-embed-text:latest", "tiny"], sizes: { "llama3.2:latest": 2019393189, "nomic-embed-text:latest": 274302450 } }] }, () => {});
    const chips = Array.from(el.querySelectorAll("button.model-choice")).map((b) => b.textContent);
    expect(chips).toEqual(["llama3.2:latest 2.0 GB", "nomic-embed-text:latest 274 MB", "tiny"]);
    expect(modelSize(3_200_000_000)).toBe("3.2 GB");
  });
});

const result = {
  status: "completed", outcome: "approved", summary: "2 agents approved",
  recommended_direction: "Use parameterized queries " + EVIL,
  key_findings: [{ id: "sec#1", agent_name: "security_" + EVIL, finding: "SQL injection " + EVIL, evidence: "[INDICATED: task] concat", evidence_level: "indicated",
    severity: "critical", confidence: 0.9, score: 0.8, supported_by: ["perf"], challenged_by: [], flags: ["prompt_injection", "corroborated"] }],
  challenges: [{ agent: "perf", target_agent: "security", finding_challenged: "SQL injection", counter_evidence: "ORM escapes " + EVIL, flags: [] }],
  concessions: [{ agent: "ops", target_agent: "security", finding_accepted: "SQL injection", reason: "agreed", flags: [] }],
  trade_offs: ["Speed vs safety " + EVIL],
  minority_views: [{ id: "perf#1", agent_name: "perf", finding: "Cache it", evidence: "", severity: "info", score: 0.2, challenges: [{ agent: "security", counter_evidence: "stale data" }], flags: [] }],
  votes: [
    { agent_name: "security", approve: true, conditions: ["Fix before release: " + EVIL], flags: [] },
    { agent_name: "perf", approve: false, conditions: [], dissent_reason: "Too slow " + EVIL, flags: [] },
  ],
  tally: { approve: 1, dissent: 1, missing: 0 },
  exclusions: [{ phase: "analyze", agent: "flaky", kind: "timeout", reason: "no answer in 5s " + EVIL }, { phase: "vote", agent: "broken", kind: "http_error", http_status: 500, reason: "HTTP 500" }],
  alerts: [{ phase: "analyze", agent: "security", field: "observations[0].evidence", pattern: "ignore_instructions", via: "plain" }],
};

describe("round tables", () => {
  it("shows live progress: phase, who answered, who is awaited, failures", () => {
    const t = new Transcript();
    t.apply(ev(1, "roundtable.progress", { run_id: "rt1", type: "started", participants: ["security", "perf", "flaky"], message: "round table with 3 agents" }));
    t.apply(ev(2, "roundtable.progress", { run_id: "rt1", type: "phase_started", phase: "analyze", waiting_for: ["security", "perf", "flaky"], message: "analyze" }));
    t.apply(ev(3, "roundtable.progress", { run_id: "rt1", type: "agent_responded", phase: "analyze", agent: "security", message: "security answered" }));
    t.apply(ev(4, "roundtable.progress", { run_id: "rt1", type: "agent_failed", phase: "analyze", agent: "flaky", message: "timeout " + EVIL }));
    const eff = t.apply(ev(5, "roundtable.progress", { run_id: "rt1", type: "waiting", phase: "analyze", waiting_for: ["perf"], message: "still waiting" }));
    expect(eff.changed).toEqual(["rt-rt1"]);
    expect(t.items).toHaveLength(1);
    const card = progressCard(t.items[0].rt!);
    inert(card);
    expect(card.querySelector('[data-phase="analyze"]')!.className).toBe("current");
    expect(card.querySelector(".rt-answered")!.textContent).toContain("security");
    expect(card.querySelector(".rt-waiting")!.textContent).toBe("Waiting for: perf");
    expect(card.querySelector(".rt-failures")!.textContent).toContain("flaky (analyze): timeout <img");
  });

  it("lays out the result and escapes every agent string", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "review", turn_id: "t1" }));
    t.apply(ev(2, "roundtable.progress", { run_id: "rt2", turn_id: "t1", type: "started", participants: ["security", "perf"], message: "go" }));
    t.apply(ev(3, "roundtable.result", { run_id: "rt2", turn_id: "t1", status: "completed", outcome: "approved", summary: result.summary, markdown: "# Result\n\n" + EVIL, result: JSON.stringify(result) }));
    // The turn's reply is the same Markdown: not shown twice.
    t.apply(ev(4, "assistant.delta", { text: "# Result\n\n", turn_id: "t1" }));
    t.apply(ev(5, "assistant.delta", { text: EVIL, turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "roundtable"]);
    t.apply(ev(6, "assistant.final", { text: "# Result\n\n" + EVIL, turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "roundtable"]);
    expect(t.running).toBe(false);
    const card = roundTableCard(t.items[0 + 1].rt!);
    inert(card);
    expect(card.dataset.state).toBe("completed");
    expect(card.querySelector(".rt-direction")!.textContent).toContain("Use parameterized queries <img");
    const f = card.querySelector(".rt-finding")!;
    expect(f.textContent).toContain("critical");
    expect(f.textContent).toContain("SQL injection");
    expect(f.textContent).toContain("[INDICATED: task] concat");
    expect(f.textContent).toContain("prompt injection");
    expect(f.textContent).toContain("supported by perf");
    expect(card.querySelector(".rt-challenge")!.textContent).toContain("perf → security");
    expect(card.querySelector(".rt-concession")!.textContent).toContain("agreed");
    expect(card.querySelector(".rt-tradeoffs")!.textContent).toContain("Speed vs safety");
    expect(card.querySelector(".rt-minority")!.textContent).toContain("stale data");
    const votes = card.querySelectorAll(".rt-vote");
    expect(votes[0].className).toContain("approve");
    expect(votes[0].textContent).toContain("Fix before release");
    expect(votes[1].className).toContain("dissent");
    expect(votes[1].textContent).toContain("reason: Too slow");
    const ex = card.querySelector(".rt-exclusions")!;
    expect(ex.textContent).toContain("analyze");
    expect(ex.textContent).toContain("flaky — timeout");
    expect(ex.textContent).toContain("HTTP 500");
    expect(card.querySelector(".rt-head")!.textContent).toContain("1 approve · 1 dissent");
    // The Markdown report is sanitized, not escaped away.
    expect(card.querySelector(".rt-markdown h1")!.textContent).toBe("Result");
  });

  it("shows a failed run with no result body", () => {
    const card = resultCard({ runId: "x", participants: [], phase: "", waitingFor: [], responded: {}, failures: [], log: [], done: true, status: "no_participants", summary: "No round table was held" });
    expect(card.textContent).toContain("no participants");
    expect(card.textContent).toContain("No round table was held");
  });
});

describe("service tools and external status", () => {
  it("renders a service tool result as its own card without a request", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "remember", turn_id: "t1" }));
    t.apply(ev(2, "tool.result", { id: "svc_1", ok: true, result: "saved to memory/MEMORY.md", source: "service", name: "memory_write", arguments: '{"target":"long_term","content":"x"}', turn_id: "t1" }));
    const it = t.items[1];
    expect(it.kind).toBe("tool");
    expect(it.tool).toMatchObject({ name: "memory_write", source: "service", ok: true, pending: false, arguments: { target: "long_term", content: "x" } });
    expect(it.tool!.decision).toBeUndefined();
  });

  it("renders a coding agent's own tool as ungated, with no decision", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "clean", turn_id: "t1" }));
    t.apply(ev(2, "tool.result", { id: "agt_t1_1", ok: true, result: "ran inside claude-cli, not gated (3 ms)", source: "agent", name: "Bash", arguments: { command: "ls" }, turn_id: "t1" }));
    const it = t.items[1];
    expect(it.tool).toMatchObject({ name: "Bash", source: "agent", ok: true, pending: false, arguments: { command: "ls" } });
    expect(it.tool!.decision).toBeUndefined();
  });

  it("uses the status marker, not the text, for an external forward", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "ping", turn_id: "t1" }));
    t.apply(ev(2, "assistant.final", { text: "Forwarded", turn_id: "t1", kind: "status" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["user", "ping"], ["status", "Forwarded"]]);
    // A real reply whose text happens to equal a status line is a reply.
    const t2 = new Transcript();
    t2.apply(ev(1, "status", { text: "Sent to external agent", kind: "external.sent", turn_id: "t1" }));
    t2.apply(ev(2, "assistant.final", { text: "Sent to external agent", turn_id: "t1" }));
    expect(t2.items.map((i) => i.kind)).toEqual(["assistant"]);
  });
});
