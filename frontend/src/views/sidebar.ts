// The sidebar: the agents, each with its sessions, and per session rename,
// clear and delete; per agent New, and Test (proxy) or Attach (external);
// an A2A agent's skills, from its agent card.
import type { Actions } from "../actions";
import type { Agent, Session } from "../bridge";
import { errText } from "../bridge";
import { agentColor, agentInitial, dateGroup, h, sessionTitle } from "../view";

export function mountSidebar(actions: Actions): void {
  const store = actions.store;
  const box = document.getElementById("agents")!;
  // Ctrl+K: find a conversation by its title, or by any message's text
  // (the service's search, for conversations the window has not opened).
  // A text field with the searchbox role, not type=search: WebKitGTK's search
  // field alone holds about 3 MB more while the window idles
  // (docs/BENCHMARKS.md, production binary); Escape clears it (below).
  const filter = h("input", { id: "session-filter", class: "session-filter", type: "text", role: "searchbox", autocomplete: "off", placeholder: "Find a conversation (Ctrl+K)", "aria-label": "Find a conversation" }) as HTMLInputElement;
  box.before(filter);
  // Every conversation at once, from the data dir (app/backup), under the list.
  const exportAll = h("div", { class: "export-all" },
    h("button", { class: "small", "data-action": "export-all-md", title: "Export all conversations as Markdown" }, "⇩ Export all"),
    h("button", { class: "small", "data-action": "export-all-json", title: "Export all conversations as JSON" }, "{} JSON"),
  );
  exportAll.querySelector('[data-action="export-all-md"]')!.addEventListener("click", () => void actions.exportAll("md"));
  exportAll.querySelector('[data-action="export-all-json"]')!.addEventListener("click", () => void actions.exportAll("json"));
  box.after(exportAll);
  const search = mountSearch(actions, filter, () => render());
  filter.addEventListener("input", () => {
    render();
    search.ask();
  });
  filter.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      filter.value = "";
      search.ask();
      render();
    }
  });

  function render(): void {
    box.replaceChildren();
    // One agent: one flat list of conversations, without its heading.
    const flat = store.agents.length === 1;
    box.classList.toggle("flat", flat);
    for (const a of store.agents) {
      const group = h("section", { class: "agent-group", "data-agent": a.agentId });
      const icon = h("span", { class: "agent-icon", title: `${a.displayName} (${a.type})` }, agentInitial(a.displayName));
      icon.style.background = agentColor(a.agentId);
      const head = h("div", { class: "agent-head" + (a.agentId === store.agentId ? " current" : "") },
        icon,
        h("span", { class: "agent-name" }, a.displayName),
        h("span", { class: `badge type-${a.type}` }, a.type),
        h("span", { class: `status-dot ${a.status?.state ?? "unknown"}`, title: `status: ${a.status?.state ?? "unknown"}${a.status?.detail ? " — " + a.status.detail : ""}` }),
      );
      head.addEventListener("click", () => actions.selectAgent(a.agentId));
      const buttons = h("div", { class: "agent-actions" });
      const add = h("button", { class: "small", "data-action": "new", title: `New ${a.displayName} session` }, "+ New");
      add.addEventListener("click", () => void actions.newSession(a.agentId));
      buttons.append(add);
      if (a.type === "proxy") {
        const test = h("button", { class: "small", "data-action": "test", title: "Send the agent a sample request and show its response" }, "Test");
        test.addEventListener("click", () => store.publish("agentTest", a));
        buttons.append(test);
      }
      if (a.type === "external") {
        const attach = h("button", { class: "small", "data-action": "attach", title: "Attach a session by its ID" }, "Attach…");
        attach.addEventListener("click", () => actions.toggleAttach(a.agentId));
        buttons.append(attach);
      }
      group.append(...(flat ? [] : [head]), buttons);
      if (a.a2a?.skills?.length) group.append(skillsList(a.a2a.skills));
      if (store.attachFor === a.agentId) group.append(attachForm(actions, a));
      const list = h("ul", { class: "sessions" });
      const q = filter.value.trim().toLowerCase();
      // Titles, and the text of conversations this window has loaded.
      const matches = (s: Session) =>
        `${sessionTitle(s)} ${s.lastSnippet ?? ""}`.toLowerCase().includes(q) ||
        !!store.transcripts.get(s.sessionId)?.items.some((it) => it.text.toLowerCase().includes(q)) ||
        search.hits.has(s.sessionId);
      const shown = store.sessions.filter((s) => s.agentId === a.agentId && (!q || matches(s)));
      // Hits in conversations past the pages loaded so far.
      if (q) for (const s of search.found.values()) if (s.agentId === a.agentId && !store.session(s.sessionId)) shown.push(s);
      // Newest first, under date headings once there are a few.
      // (One without a time was just made here: it is the newest.)
      const when = (s: Session) => s.updatedAt ?? s.createdAt ?? new Date().toISOString();
      shown.sort((x, y) => (y.pinnedAt ? 1 : 0) - (x.pinnedAt ? 1 : 0) || when(y).localeCompare(when(x)));
      let heading = "";
      for (const s of shown) {
        const g = s.pinnedAt ? "Pinned" : dateGroup(when(s));
        if (shown.length > 3 && g !== heading) list.append(h("li", { class: "date-group" }, g));
        heading = g;
        const row = sessionRow(actions, s);
        const snippet = q ? search.hits.get(s.sessionId) : undefined;
        if (snippet) row.append(highlighted(snippet, filter.value.trim()));
        list.append(row);
      }
      group.append(list);
      box.append(group);
    }
    // The list and the search load a page at a time: the next one on
    // reaching the end (or with the button), saying so while it loads.
    const q = filter.value.trim();
    if (q ? search.cursor || search.loading : store.sessionsCursor || store.sessionsLoading) {
      const loading = q ? search.loading : store.sessionsLoading;
      const more = h("button", { class: "small load-more", "data-action": q ? "more-results" : "more-sessions", "aria-busy": loading ? "true" : "false" },
        loading ? (q ? "Searching…" : "Loading…") : q ? "More results" : "Load more");
      (more as HTMLButtonElement).disabled = loading;
      more.addEventListener("click", () => void (q ? search.more() : actions.moreSessions()));
      box.append(more);
      watchEnd(more);
    }
  }
  // Infinite scroll: the "Load more" button coming into view loads the next
  // page (where the window has IntersectionObserver; the button otherwise).
  let seen: IntersectionObserver | undefined;
  function watchEnd(el: Element): void {
    if (typeof IntersectionObserver === "undefined") return;
    seen?.disconnect();
    seen = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) (el as HTMLButtonElement).click();
    });
    seen.observe(el);
  }
  store.subscribe("agents", render);
  store.subscribe("sessions", render);
}

/** How long typing pauses before the service is asked. */
const searchDelayMs = 200;

/**
 * The service's message search behind the find box: after a pause in typing
 * it asks for the sessions whose messages contain the text and keeps each
 * one's snippet, a page at a time (more() asks for the next); an answer for
 * text no longer in the box is dropped.
 */
function mountSearch(actions: Actions, filter: HTMLInputElement, changed: () => void) {
  const hits = new Map<string, string>();
  const found = new Map<string, Session>();
  const st = { hits, found, cursor: "", loading: false, ask, more };
  let timer: ReturnType<typeof setTimeout> | undefined;
  function reset(): void {
    hits.clear();
    found.clear();
    st.cursor = "";
  }
  async function page(q: string, cursor: string): Promise<void> {
    st.loading = true;
    changed();
    try {
      const res = await actions.api().SearchSessions(q, cursor);
      if (filter.value.trim() !== q) return;
      if (!cursor) reset();
      for (const f of res.results ?? []) {
        if (hits.has(f.session.sessionId)) continue;
        hits.set(f.session.sessionId, f.snippet);
        found.set(f.session.sessionId, f.session);
      }
      st.cursor = res.nextCursor ?? "";
    } catch (ex) {
      if (filter.value.trim() !== q) return;
      if (!cursor) reset();
      actions.store.publish("notice", { text: `Search failed: ${errText(ex)}`, good: false });
    } finally {
      if (filter.value.trim() === q) st.loading = false;
    }
    changed();
  }
  function ask(): void {
    clearTimeout(timer);
    const q = filter.value.trim();
    if (q.length < 2) {
      const had = hits.size > 0 || st.loading;
      reset();
      st.loading = false;
      if (had) changed();
      return;
    }
    st.cursor = ""; // the next page of the old text is no page of this one
    timer = setTimeout(() => void page(q, ""), searchDelayMs);
  }
  async function more(): Promise<void> {
    const q = filter.value.trim();
    if (!st.cursor || st.loading || q.length < 2) return;
    await page(q, st.cursor);
  }
  return st;
}

/**
 * A search hit's snippet under its row's title, the searched words marked:
 * one line, the text as text (never markup), Markdown fences and marks
 * taken out so rows can be told apart.
 */
export function highlighted(snippet: string, q: string): HTMLElement {
  let text = snippet
    .replace(/```[a-z]*\n?/gi, " ")
    .replace(/[*_`#>]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const el = h("div", { class: "session-snippet" });
  const words = q.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
  // The first match near the start, so that a narrow row shows it.
  const first = Math.min(...words.map((w) => text.toLowerCase().indexOf(w)).filter((i) => i >= 0));
  if (Number.isFinite(first) && first > 16) {
    const from = text.lastIndexOf(" ", first - 8);
    text = "…" + text.slice(from > 0 ? from + 1 : first - 8);
  }
  const lower = text.toLowerCase();
  let at = 0;
  while (at < text.length) {
    let best = -1;
    let len = 0;
    for (const w of words) {
      const i = lower.indexOf(w, at);
      if (i >= 0 && (best < 0 || i < best)) [best, len] = [i, w.length];
    }
    if (best < 0) break;
    if (best > at) el.append(text.slice(at, best));
    el.append(h("mark", {}, text.slice(best, best + len)));
    at = best + len;
  }
  if (at < text.length) el.append(text.slice(at));
  return el;
}

function attachForm(actions: Actions, a: Agent): HTMLElement {
  const input = h("input", { type: "text", placeholder: "External session ID", maxlength: "128", "aria-label": "External session ID" }) as HTMLInputElement;
  const err = h("div", { class: "form-error", role: "alert" });
  const go = h("button", { class: "small primary", type: "submit" }, "Attach");
  const form = h("form", { class: "attach-form" }, input, go, err);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    err.textContent = "";
    const id = input.value.trim();
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) {
      err.textContent = "Use 1–128 letters, digits, '-' or '_'.";
      return;
    }
    try {
      await actions.attachSession(a.agentId, id);
    } catch (ex) {
      err.textContent = errText(ex);
    }
  });
  setTimeout(() => input.focus(), 0);
  return form;
}

/** A row's time: the hour today, else the day. */
function shortTime(iso: string, now = new Date()): string {
  const t = new Date(iso);
  if (isNaN(t.getTime())) return "";
  if (t.toDateString() === now.toDateString()) return t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return t.toLocaleDateString([], { month: "short", day: "numeric" });
}

function sessionRow(actions: Actions, s: Session): HTMLElement {
  const store = actions.store;
  const li = h("li", { class: "session" + (s.sessionId === store.sessionId ? " current" : ""), "data-session": s.sessionId });
  if (store.renaming === s.sessionId) {
    const input = h("input", { type: "text", value: s.name ?? "", "aria-label": "Session name" }) as HTMLInputElement;
    let done = false;
    const finish = (save: boolean) => {
      if (done) return;
      done = true;
      if (save) void actions.renameSession(s.sessionId, input.value.trim());
      else actions.startRename("");
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") finish(true);
      if (e.key === "Escape") finish(false);
    });
    input.addEventListener("blur", () => finish(true));
    li.append(input);
    setTimeout(() => input.select(), 0);
    return li;
  }
  // The whole row opens the conversation; its actions are in the "⋯" menu,
  // never over the title (a click on the title only opens).
  const title = h("span", { class: "session-title" }, sessionTitle(s));
  const when = s.updatedAt ?? s.createdAt;
  const time = h("span", { class: "session-time" }, when ? shortTime(when) : "");
  li.addEventListener("click", () => void actions.openSession(s.sessionId));
  const more = h("button", { class: "icon session-more", type: "button", "aria-label": `Actions for ${sessionTitle(s)}`, "aria-haspopup": "menu", "aria-expanded": "false", "data-action": "more" }, "⋯");
  const menu = h("div", { class: "session-menu", role: "menu" });
  menu.hidden = true;
  const mk = (label: string, action: string, fn: () => void) => {
    const b = h("button", { type: "button", role: "menuitem", "data-action": action }, label);
    b.addEventListener("click", (e) => {
      e.stopPropagation();
      menu.hidden = true;
      more.setAttribute("aria-expanded", "false");
      fn();
    });
    return b;
  };
  menu.append(
    mk("Rename", "rename", () => actions.startRename(s.sessionId)),
    mk(s.pinnedAt ? "Unpin" : "Pin to the top", "pin", () => void actions.pinSession(s.sessionId, !s.pinnedAt)),
    mk("Export as Markdown", "export-md", () => void actions.exportSession(s.sessionId, "md")),
    mk("Export as JSON", "export-json", () => void actions.exportSession(s.sessionId, "json")),
    mk("Clear history", "clear", () => {
      if (confirm(`Clear the history of “${sessionTitle(s)}”? Its name and agent stay.`)) void actions.clearSession(s.sessionId);
    }),
    mk("Delete", "delete", () => {
      // No blocking dialog: it goes at once, and Undo brings it back for a few seconds.
      const undo = actions.deleteLater(s.sessionId);
      store.publish("notice", { text: `Deleted “${sessionTitle(s)}”.`, good: true, undo });
    }),
  );
  more.addEventListener("click", (e) => {
    e.stopPropagation();
    menu.hidden = !menu.hidden;
    more.setAttribute("aria-expanded", String(!menu.hidden));
    if (!menu.hidden) menu.querySelector<HTMLButtonElement>("button")?.focus();
  });
  menu.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      menu.hidden = true;
      more.setAttribute("aria-expanded", "false");
      more.focus();
    }
  });
  li.append(h("div", { class: "session-line" }, title, time, more), menu);
  return li;
}

/** An A2A agent's skills (its card's, GET /v1/agents), folded under the agent. */
export function skillsList(skills: { id: string; name: string; description?: string; tags?: string[] }[]): HTMLElement {
  const ul = h("ul", { class: "skill-list" });
  for (const sk of skills) {
    const li = h("li", { "data-skill": sk.id }, h("b", {}, sk.name || sk.id));
    if (sk.description) li.append(` — ${sk.description}`);
    if (sk.tags?.length) li.append(h("span", { class: "hint" }, ` (${sk.tags.join(", ")})`));
    ul.append(li);
  }
  return h("details", { class: "agent-skills" }, h("summary", {}, skills.length === 1 ? "1 skill" : `${skills.length} skills`), ul);
}
