// The window's panels besides the conversation: the audit log view, the
// proxy agents' Test report and the discovered local model servers of the
// setup form. Builders only (no state, no calls): text always goes in as
// text, so tool arguments, results and agent responses stay inert.
import type { AuditEntry, ProvidersInfo, ProxyTestReport, VerifyReport } from "./bridge";
import { h } from "./view";

/**
 * Gives inputs written as <input type="text" data-type="date"> their real
 * type. The audit panel's date filters are made date inputs when the panel
 * first opens, not at start-up: a date input loads the locale's calendar
 * data (about 3 MB of ICU in the page) as soon as it exists, even hidden.
 */
export function upgradeLazyInputs(root: ParentNode): void {
  for (const el of Array.from(root.querySelectorAll<HTMLInputElement>("input[data-type]"))) {
    el.type = el.dataset.type!;
    el.removeAttribute("data-type");
  }
}

export function fmtTime(iso: string): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function pretty(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

/** The audit table: one row per entry, newest first as given. */
export function auditTable(
  entries: AuditEntry[],
  selected: number | undefined,
  onPick: (e: AuditEntry) => void,
  // The conversation's name for a session id, and opening it (the audit view).
  conv?: { name: (sessionId: string) => string | undefined; open: (sessionId: string) => void },
): HTMLElement[] {
  const head = h("tr", {}, ...["#", "time", "tool", "class", "decision", "decided by", "conversation"].map((x) => h("th", {}, x)),
    h("th", { title: "From the request to the result, including the time you took to answer the prompt" }, "time taken (incl. your decision)"));
  const rows: HTMLElement[] = [h("thead", {}, head)];
  const body = h("tbody", {});
  for (const e of entries) {
    const tr = h("tr", { class: "audit-row" + (e.id === selected ? " selected" : ""), "data-id": String(e.id), "data-tool": e.tool, "data-decision": e.decision, tabindex: "0" },
      h("td", {}, String(e.id)),
      h("td", { class: "nowrap" }, fmtTime(e.time)),
      h("td", { class: "mono" }, e.tool),
      h("td", {}, h("span", { class: `badge risk-${e.class}` }, e.class)),
      h("td", {}, h("span", { class: `badge decision-${e.decision}` }, e.decision)),
      h("td", {}, e.decided_by),
      h("td", { class: "ellipsis", title: e.session_id ?? "" }, sessionCell(e.session_id ?? "", conv)),
      h("td", { class: "num" }, `${e.duration_ms ?? 0} ms`),
    );
    tr.addEventListener("click", () => onPick(e));
    tr.addEventListener("keydown", (ev) => {
      if ((ev as KeyboardEvent).key === "Enter") onPick(e);
    });
    body.append(tr);
  }
  if (!entries.length) body.append(h("tr", {}, h("td", { colspan: "8", class: "empty-row" }, "No audit rows match.")));
  rows.push(body);
  return rows;
}

// A row's conversation: its name, a link that opens it; the id when the window does not know it.
function sessionCell(id: string, conv?: { name: (sessionId: string) => string | undefined; open: (sessionId: string) => void }): Node {
  const name = id && conv?.name(id);
  if (!name) return h("span", { class: "mono" }, id);
  const a = h("button", { class: "link", type: "button", "data-action": "open-session", "data-session": id }, name);
  a.addEventListener("click", (ev) => {
    ev.stopPropagation();
    conv!.open(id);
  });
  return a;
}

/** A row's detail: arguments, result or error, duration and hashes. */
export function auditDetail(e: AuditEntry | undefined): HTMLElement {
  if (!e) return h("div", { class: "hint" }, "Pick a row to see its arguments, result and hash.");
  const dl = h("dl", { class: "audit-dl" });
  const add = (k: string, v: string | Node, cls = "") => {
    if (v === "" || v === undefined) return;
    dl.append(h("dt", {}, k), h("dd", { class: cls }, v));
  };
  add("row", `#${e.id} · ${fmtTime(e.time)}`);
  add("tool", e.tool, "mono");
  add("tool call", e.tool_call_id ?? "", "mono");
  add("session", e.session_id ?? "", "mono");
  add("decision", `${e.decision} by ${e.decided_by} (class ${e.class}${e.proposed_risk ? `, proposed ${e.proposed_risk}` : ""})`);
  add("reason", e.reason ?? "");
  add("time taken", `${e.duration_ms ?? 0} ms (including the time you took to decide)`);
  const box = h("div", { class: "audit-detail-box", "data-id": String(e.id) }, dl);
  box.append(h("div", { class: "label" }, "arguments"), h("pre", { class: "audit-pre" }, pretty(e.arguments)));
  if (e.edited_arguments) box.append(h("div", { class: "label" }, "edited by the user to"), h("pre", { class: "audit-pre" }, pretty(e.edited_arguments)));
  if (e.result) box.append(h("div", { class: "label" }, "result"), h("pre", { class: "audit-pre ok" }, e.result));
  if (e.error) box.append(h("div", { class: "label" }, "error"), h("pre", { class: "audit-pre failed" }, e.error));
  // The chain's hashes matter to "Verify chain", rarely to a reader: folded.
  box.append(h("details", { class: "audit-hashes" }, h("summary", {}, "Hashes"),
    h("div", { class: "label" }, "hash"), h("div", { class: "mono hash" }, e.hash), h("div", { class: "label" }, "previous hash"), h("div", { class: "mono hash" }, e.prev_hash)));
  return box;
}

/** What "Verify chain" found, as one line. */
export function verifyText(r: VerifyReport): { ok: boolean; text: string } {
  if (r.ok) {
    const w = r.warnings?.length ? ` — warning: ${r.warnings.join("; ")}` : "";
    return { ok: !r.warnings?.length, text: `Chain OK: ${r.rows} row${r.rows === 1 ? "" : "s"} verified${w}` };
  }
  const where = r.first_bad_id ? ` at row #${r.first_bad_id}` : "";
  return { ok: false, text: `Chain broken${where}: ${r.reason ?? "tampered"}${r.warnings?.length ? ` — ${r.warnings.join("; ")}` : ""}` };
}

/** The report of a proxy agent's Test action (seed 002's Response box). */
export function testReport(r: ProxyTestReport): HTMLElement {
  const good = !r.error && r.status >= 200 && r.status < 300 && (r.parsed || r.pending);
  const box = h("div", { class: "test-report", "data-ok": good ? "1" : "0" });
  const head = h("div", { class: "badges" },
    h("span", { class: `badge ${good ? "decision-allowed" : "decision-denied"}` }, good ? "connection OK" : "failed"),
    h("span", { class: "badge" }, r.status ? `HTTP ${r.status}` : "no HTTP status"),
    h("span", { class: "badge" }, `${r.latencyMs} ms`),
    h("span", { class: `badge ${r.parsed ? "risk-safe" : "risk-forbidden"}` }, r.parsed ? "response parsed" : "not parsed"),
  );
  if (r.pending) head.append(h("span", { class: "badge decision-waiting" }, "async: answer goes to the callback"));
  if (r.agentStatus) head.append(h("span", { class: "badge" }, `agent status: ${r.agentStatus}`));
  if (r.chunks) head.append(h("span", { class: "badge" }, `${r.chunks} chunks`));
  box.append(head);
  if (r.error) box.append(h("div", { class: "form-error test-error" }, `${r.errorKind ? r.errorKind + ": " : ""}${r.error}`));
  if (r.parseError) box.append(h("div", { class: "form-error" }, `parse error: ${r.parseError}`));
  box.append(h("div", { class: "label" }, "output"), h("pre", { class: "audit-pre test-output" }, r.output || "(none)"));
  if (r.thoughts?.length) {
    const ul = h("ul", { class: "test-thoughts" });
    for (const t of r.thoughts) ul.append(h("li", {}, t));
    box.append(h("div", { class: "label" }, "thoughts"), ul);
  }
  box.append(h("div", { class: "label" }, `raw response${r.contentType ? ` (${r.contentType})` : ""}${r.rawTruncated ? " — truncated" : ""}`), h("pre", { class: "audit-pre test-raw" }, pretty(r.rawResponse) || "(empty)"));
  if (r.requestBody) box.append(h("details", {}, h("summary", {}, "request body sent"), h("pre", { class: "audit-pre" }, pretty(r.requestBody))));
  if (r.callbackUrl) box.append(h("div", { class: "hint" }, `callback URL: ${r.callbackUrl}`));
  return box;
}

/** A model's size as people read it: "2.0 GB", "274 MB" (decimal units, as model servers list them). */
export function modelSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} KB`;
}

/** The discovered local servers as one-click choices, one per model, with its size when the server lists it. */
export function discoveredList(p: ProvidersInfo, pick: (baseUrl: string, model: string) => void): HTMLElement {
  const box = h("div", { class: "discovered-list" });
  if (!p.discovered?.length) {
    box.append(h("p", { class: "hint" }, "No local model server found on the default ports (Ollama 11434, LM Studio 1234, llama.cpp 8080). Enter a server below."));
    return box;
  }
  box.append(h("p", { class: "hint" }, "Found on this computer — click a model to use it:"));
  for (const s of p.discovered) {
    const row = h("div", { class: "discovered-server", "data-base": s.baseUrl }, h("b", {}, s.name), h("span", { class: "mono hint" }, ` ${s.baseUrl}`));
    const models = h("div", { class: "models" });
    for (const m of s.models ?? []) {
      const size = s.sizes?.[m];
      const b = h("button", { type: "button", class: "small model-choice", "data-model": m }, m, ...(size ? [h("span", { class: "model-size" }, ` ${modelSize(size)}`)] : []));
      b.addEventListener("click", () => pick(s.baseUrl, m));
      models.append(b);
    }
    if (!s.models?.length) models.append(h("span", { class: "hint" }, "no models listed"));
    row.append(models);
    box.append(row);
  }
  return box;
}
