// The audit log dialog: filters, the table of tool calls, a row's detail,
// chain verification and export (the builders are in panels.ts).
import type { Actions } from "../actions";
import { errText, type AuditEntry, type AuditFilter } from "../bridge";
import { auditDetail, auditTable, upgradeLazyInputs, verifyText } from "../panels";
import { sessionTitle } from "../view";

export function mountAudit(actions: Actions): void {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const dlg = $("audit");
  const filters = $<HTMLFormElement>("audit-filters");
  let entries: AuditEntry[] = [];
  let selected: number | undefined;

  const filter = (): AuditFilter => {
    const f = new FormData(filters);
    const g = (k: string) => String(f.get(k) ?? "");
    return { tool: g("tool"), decision: g("decision"), decidedBy: g("decidedBy"), sessionId: g("sessionId"), since: g("since"), until: g("until"), limit: 500 };
  };
  const status = (text: string, cls = "") => {
    const el = $("audit-status");
    el.textContent = text;
    el.className = `audit-status ${cls}`;
  };
  const render = () => {
    const conv = {
      name: (id: string) => {
        const s = actions.store.session(id);
        return s ? sessionTitle(s) : undefined;
      },
      open: (id: string) => {
        dlg.hidden = true;
        void actions.openSession(id);
      },
    };
    $("audit-list").replaceChildren(...auditTable(entries, selected, (e) => {
      selected = e.id;
      render();
    }, conv));
    $("audit-detail").replaceChildren(auditDetail(entries.find((e) => e.id === selected)));
  };
  const load = async () => {
    try {
      const p = await actions.api().AuditList(filter());
      entries = p.entries ?? [];
      if (!entries.some((e) => e.id === selected)) selected = entries[0]?.id;
      render();
      status(`${entries.length}${p.more ? "+" : ""} row${entries.length === 1 ? "" : "s"}`);
    } catch (ex) {
      status(errText(ex), "bad");
    }
  };

  $("open-audit").addEventListener("click", () => {
    upgradeLazyInputs(filters);
    dlg.hidden = false;
    void load();
  });
  $("audit-close").addEventListener("click", () => (dlg.hidden = true));
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") dlg.hidden = true;
  });
  filters.addEventListener("submit", (e) => {
    e.preventDefault();
    void load();
  });
  filters.addEventListener("reset", () => setTimeout(() => void load(), 0));
  $("audit-verify").addEventListener("click", async () => {
    status("Verifying…");
    try {
      const v = verifyText(await actions.api().AuditVerify());
      status(v.text, v.ok ? "good" : "bad");
    } catch (ex) {
      status(errText(ex), "bad");
    }
  });
  $("audit-export").addEventListener("click", async () => {
    try {
      const x = await actions.api().AuditExportJSONL(filter());
      if (x.cancelled) status("Export cancelled");
      else status(`Exported ${x.rows} row${x.rows === 1 ? "" : "s"} to ${x.path}`, "good");
    } catch (ex) {
      status(errText(ex), "bad");
    }
  });
}
