// Round-table cards: a live progress card while the agents deliberate and a
// laid-out result (direction, findings, challenges, votes, exclusions) when
// it ends. Every string in a round table comes from an agent: it goes into
// the DOM as text (h() uses text nodes); only the Markdown rendering of the
// whole result goes through renderReply, which sanitizes.
import { renderReply } from "./reply";
import type { RoundTable } from "./transcript";
import { h } from "./view";

const PHASES = ["analyze", "challenge", "synthesis", "vote"];

const str = (v: unknown): string => (v === undefined || v === null ? "" : String(v));
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);

function chip(text: string, cls = ""): HTMLElement {
  return h("span", { class: `badge ${cls}`.trim() }, text);
}

function flags(v: unknown): HTMLElement | undefined {
  const fs = list(v).map(str).filter(Boolean);
  if (!fs.length) return undefined;
  const el = h("span", { class: "rt-flags" });
  for (const f of fs) el.append(chip(f.replace(/_/g, " "), /injection|hidden|homoglyph/.test(f) ? "flag-danger" : "flag"));
  return el;
}

function section(title: string, cls: string, ...body: (Node | string)[]): HTMLElement {
  return h("section", { class: `rt-section ${cls}` }, h("h4", {}, title), ...body);
}

/** The card of a round table: progress while it runs, the result after. */
export function roundTableCard(rt: RoundTable): HTMLElement {
  return rt.done ? resultCard(rt) : progressCard(rt);
}

export function progressCard(rt: RoundTable): HTMLElement {
  const card = h("div", { class: "rt-card rt-progress", "data-run": rt.runId, "data-state": "running" });
  card.append(h("div", { class: "rt-head" }, h("span", { class: "rt-title" }, "⚖ Round table"), chip("deliberating…", "decision-waiting")));
  const steps = h("ol", { class: "rt-phases" });
  const current = PHASES.indexOf(rt.phase);
  PHASES.forEach((p, i) => {
    const cls = i < current ? "done" : i === current ? "current" : "";
    const li = h("li", { class: cls, "data-phase": p }, p);
    const n = rt.responded[p]?.length;
    if (n) li.append(h("span", { class: "rt-count" }, ` ${n}`));
    steps.append(li);
  });
  card.append(steps);
  if (rt.participants.length) card.append(h("div", { class: "rt-line" }, h("b", {}, "Participants: "), rt.participants.join(", ")));
  const answered = rt.responded[rt.phase] ?? [];
  if (answered.length) card.append(h("div", { class: "rt-line rt-answered" }, h("b", {}, "Answered: "), answered.join(", ")));
  if (rt.waitingFor.length) card.append(h("div", { class: "rt-line rt-waiting" }, h("b", {}, "Waiting for: "), rt.waitingFor.join(", ")));
  if (rt.failures.length) {
    const ul = h("ul", { class: "rt-failures" });
    for (const f of rt.failures) ul.append(h("li", {}, h("b", {}, f.agent || "?"), ` (${f.phase}): ${f.message}`));
    card.append(h("div", { class: "rt-line" }, h("b", {}, "Failed:")), ul);
  }
  const last = rt.log[rt.log.length - 1];
  if (last?.message) card.append(h("div", { class: "rt-last" }, last.message));
  return card;
}

export function resultCard(rt: RoundTable): HTMLElement {
  const r = rt.result ?? {};
  const outcome = str(rt.outcome || r.outcome);
  const status = str(rt.status || r.status);
  const card = h("div", { class: "rt-card rt-result", "data-run": rt.runId, "data-state": status || "done" });
  const head = h("div", { class: "rt-head" }, h("span", { class: "rt-title" }, "⚖ Round table"));
  if (status && status !== "completed") head.append(chip(status.replace(/_/g, " "), "decision-denied"));
  if (outcome) head.append(chip(outcome.replace(/_/g, " "), outcome === "approved" ? "decision-allowed" : outcome === "rejected" ? "decision-denied" : "decision-waiting"));
  const tally = r.tally;
  if (tally) head.append(chip(`${tally.approve ?? 0} approve · ${tally.dissent ?? 0} dissent${tally.missing ? ` · ${tally.missing} missing` : ""}`));
  card.append(head);
  if (rt.summary || r.summary) card.append(h("div", { class: "rt-summary" }, str(rt.summary || r.summary)));

  if (r.recommended_direction) card.append(section("Recommended direction", "rt-direction", h("p", {}, str(r.recommended_direction))));

  const findings = list(r.key_findings);
  if (findings.length) {
    const ul = h("ul", { class: "rt-findings" });
    for (const f of findings) {
      const li = h("li", { class: `rt-finding sev-${str(f.severity) || "info"}` });
      const top = h("div", { class: "rt-finding-head" }, chip(str(f.severity) || "info", `sev sev-${str(f.severity) || "info"}`), " ", h("b", {}, str(f.agent_name)), " ", h("span", { class: "rt-finding-text" }, str(f.finding)));
      li.append(top);
      if (f.evidence) li.append(h("div", { class: "rt-evidence" }, chip(str(f.evidence_level) || "evidence"), " ", str(f.evidence)));
      const meta: string[] = [];
      if (typeof f.confidence === "number") meta.push(`confidence ${Math.round(f.confidence * 100)}%`);
      if (list(f.supported_by).length) meta.push(`supported by ${list(f.supported_by).join(", ")}`);
      if (list(f.challenged_by).length) meta.push(`challenged by ${list(f.challenged_by).join(", ")}`);
      if (meta.length) li.append(h("div", { class: "rt-meta" }, meta.join(" · ")));
      const fl = flags(f.flags);
      if (fl) li.append(fl);
      ul.append(li);
    }
    card.append(section("Key findings", "rt-key-findings", ul));
  }

  const challenges = list(r.challenges);
  const concessions = list(r.concessions);
  if (challenges.length || concessions.length) {
    const ul = h("ul", { class: "rt-challenges" });
    for (const c of challenges) {
      const li = h("li", { class: "rt-challenge" }, chip("challenge", "decision-denied"), " ", h("b", {}, str(c.agent)), ` → ${str(c.target_agent)}: `, h("i", {}, str(c.finding_challenged)));
      if (c.counter_evidence) li.append(h("div", { class: "rt-evidence" }, str(c.counter_evidence)));
      const fl = flags(c.flags);
      if (fl) li.append(fl);
      ul.append(li);
    }
    for (const c of concessions) {
      const li = h("li", { class: "rt-concession" }, chip("concession", "decision-allowed"), " ", h("b", {}, str(c.agent)), ` → ${str(c.target_agent)}: `, h("i", {}, str(c.finding_accepted)));
      if (c.reason) li.append(h("div", { class: "rt-evidence" }, str(c.reason)));
      const fl = flags(c.flags);
      if (fl) li.append(fl);
      ul.append(li);
    }
    card.append(section("Challenges and concessions", "rt-debate", ul));
  }

  const trade = list(r.trade_offs).map(str).filter(Boolean);
  if (trade.length) {
    const ul = h("ul", {});
    for (const t of trade) ul.append(h("li", {}, t));
    card.append(section("Trade-offs", "rt-tradeoffs", ul));
  }

  const minority = list(r.minority_views);
  if (minority.length) {
    const ul = h("ul", {});
    for (const m of minority) {
      const li = h("li", { class: "rt-minority" }, h("b", {}, str(m.agent_name)), ": ", str(m.finding));
      for (const c of list(m.challenges)) li.append(h("div", { class: "rt-evidence" }, `challenged by ${str(c.agent)}: ${str(c.counter_evidence)}`));
      ul.append(li);
    }
    card.append(section("Minority views", "rt-minority-views", ul));
  }

  const votes = list(r.votes);
  if (votes.length) {
    const ul = h("ul", { class: "rt-votes" });
    for (const v of votes) {
      const li = h("li", { class: `rt-vote ${v.approve ? "approve" : "dissent"}` }, chip(v.approve ? "approve" : "dissent", v.approve ? "decision-allowed" : "decision-denied"), " ", h("b", {}, str(v.agent_name)));
      const conds = list(v.conditions).map(str).filter(Boolean);
      if (conds.length) {
        const cl = h("ul", { class: "rt-conditions" });
        for (const c of conds) cl.append(h("li", {}, c));
        li.append(h("div", { class: "rt-meta" }, "conditions:"), cl);
      }
      if (v.dissent_reason) li.append(h("div", { class: "rt-evidence" }, `reason: ${str(v.dissent_reason)}`));
      const fl = flags(v.flags);
      if (fl) li.append(fl);
      ul.append(li);
    }
    card.append(section("Votes", "rt-votes-section", ul));
  }

  const excl = list(r.exclusions);
  if (excl.length) {
    const byPhase = new Map<string, any[]>();
    for (const x of excl) {
      const p = str(x.phase) || "?";
      if (!byPhase.has(p)) byPhase.set(p, []);
      byPhase.get(p)!.push(x);
    }
    const box = h("div", { class: "rt-exclusions" });
    for (const [p, xs] of byPhase) {
      const ul = h("ul", {});
      for (const x of xs) ul.append(h("li", {}, h("b", {}, str(x.agent)), ` — ${str(x.kind).replace(/_/g, " ")}${x.http_status ? ` (HTTP ${x.http_status})` : ""}: ${str(x.reason)}`));
      box.append(h("div", { class: "rt-phase-label" }, p), ul);
    }
    card.append(section("Exclusions", "rt-exclusions-section", box));
  }

  const alerts = list(r.alerts);
  if (alerts.length) {
    const ul = h("ul", {});
    for (const a of alerts) ul.append(h("li", {}, `${str(a.agent)} · ${str(a.phase)} · ${str(a.field)}: ${str(a.pattern)} (${str(a.via)})`));
    card.append(section("Prompt-injection alerts", "rt-alerts", ul));
  }

  if (rt.markdown) {
    const body = h("div", { class: "rt-markdown" });
    body.innerHTML = renderReply(rt.markdown); // sanitized
    card.append(h("details", { class: "rt-full" }, h("summary", {}, "Full report (Markdown)"), body));
  }
  return card;
}
