// The Inbox: one list of what happened while you were away (tasks' results
// and failures, calls of tasks' runs waiting for your approval), newest
// first, with the unread count on its sidebar button; each item opens its
// conversation, approvals are given or refused here, results marked done.
// Below it, the scheduled tasks (schedule and tools in words; Run now, Pause,
// Edit, Delete, and New task through the form of taskform.ts) and "Run tasks
// when Jarvis is closed" (docs/guide/tasks.md).
import type { Actions } from "./actions";
import { api, errText, on, type Agent, type InboxItem, type Task } from "./bridge";
import { renderTaskForm } from "./taskform";
import { h } from "./view";

/** The sidebar button's label: "Inbox", or "Inbox (3)" with unread items. */
export function inboxLabel(unread: number): string {
  return unread > 0 ? `Inbox (${unread})` : "Inbox";
}

/** The unread items of the conversation open in the window (answers and
 *  results that arrived there): you are reading them, so they are read. */
export function readHere(items: InboxItem[], openSessionId: string): InboxItem[] {
  if (!openSessionId) return [];
  return items.filter((it) => !it.read && it.session_id === openSessionId && it.kind !== "approval");
}

export interface InboxHandlers {
  open(it: InboxItem): void;
  decide(it: InboxItem, choice: "allow" | "deny"): void;
  done(it: InboxItem): void;
}

function when(iso: string): string {
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** The list of items, newest first, each with what can be done with it. */
export function renderInbox(items: InboxItem[], on: InboxHandlers): HTMLElement {
  const list = h("ul", { class: "inbox-list" });
  if (items.length === 0) list.append(h("li", { class: "hint" }, "Nothing waits for you."));
  for (const it of items) {
    const li = h("li", { class: `inbox-item kind-${it.kind} state-${it.state}` + (it.read ? "" : " unread"), "data-id": it.id });
    li.append(h("div", { class: "inbox-head" }, h("span", { class: "inbox-title" }, it.title), h("span", { class: "hint" }, when(it.created_at))));
    if (it.body) li.append(h("div", { class: "inbox-body" }, it.body));
    const acts = h("div", { class: "inbox-actions" });
    if (it.kind === "approval" && it.state === "pending") {
      const allow = h("button", { class: "small primary", "data-action": "allow" }, "Allow");
      allow.addEventListener("click", () => on.decide(it, "allow"));
      const deny = h("button", { class: "small danger", "data-action": "deny" }, "Deny");
      deny.addEventListener("click", () => on.decide(it, "deny"));
      acts.append(allow, deny);
    } else if (it.kind === "approval") {
      acts.append(h("span", { class: "badge" }, it.state));
    }
    if (it.session_id) {
      const open = h("button", { class: "small", "data-action": "open" }, "Open conversation");
      open.addEventListener("click", () => on.open(it));
      acts.append(open);
    }
    if (!(it.kind === "approval" && it.state === "pending") && it.state !== "done") {
      const done = h("button", { class: "small", "data-action": "done" }, "Done");
      done.addEventListener("click", () => on.done(it));
      acts.append(done);
    }
    li.append(acts);
    list.append(li);
  }
  return list;
}

export interface TaskHandlers {
  edit(t: Task): void;
  pause(t: Task, paused: boolean): void;
  remove(t: Task): void;
  runNow(t: Task): void;
}

function button(label: string, action: string, f: () => void, cls = "small"): HTMLElement {
  const b = h("button", { class: cls, type: "button", "data-action": action }, label);
  b.addEventListener("click", f);
  return b;
}

/** The scheduled tasks, each with its schedule, next run and tools in words,
 *  and (with handlers) Run now, Pause/Resume, Edit and Delete; a task of
 *  tasks.json is changed there. */
export function renderTasks(tasks: Task[], on?: TaskHandlers): HTMLElement {
  const list = h("ul", { class: "task-list" });
  if (tasks.length === 0) list.append(h("li", { class: "hint" }, "No scheduled tasks. Add one with \u201cNew task\u201d, ask in a conversation (\u201cevery weekday at 8:00, …\u201d) or add them to tasks.json."));
  for (const t of tasks) {
    const next = t.next_run ? ` — next ${when(t.next_run)}` : "";
    const li = h("li", { class: "task" + (t.disabled ? " paused" : ""), "data-id": t.id },
      h("div", { class: "inbox-title" }, t.name),
      h("div", { class: "hint" }, `${t.schedule_words ?? t.schedule}${t.disabled ? " (paused)" : next}`),
      h("div", { class: "inbox-body" }, t.policy ?? ""));
    if (on) {
      const acts = h("div", { class: "inbox-actions" }, button("Run now", "run", () => on.runNow(t)));
      if (t.source === "file") {
        acts.append(h("span", { class: "hint" }, "from tasks.json: change it there"));
      } else {
        acts.append(
          button(t.disabled ? "Resume" : "Pause", t.disabled ? "resume" : "pause", () => on.pause(t, !t.disabled)),
          button("Edit", "edit", () => on.edit(t)),
          button("Delete", "delete", () => on.remove(t), "small danger"),
        );
      }
      li.append(acts);
    }
    list.append(li);
  }
  return list;
}

export function mountInbox(actions: Actions, flash: (msg: string, good?: boolean) => void): { refresh(): Promise<void> } {
  const foot = document.querySelector(".sidebar-foot");
  const button = h("button", { id: "open-inbox", class: "small", type: "button", title: "Results, failures and approvals of scheduled tasks" }, "Inbox");
  foot?.prepend(button);
  const box = h("section", { id: "inbox", role: "region", "aria-label": "Inbox" });
  box.hidden = true;
  document.getElementById("notice")?.before(box);
  const formSlot = h("div", { class: "task-form-slot" }); // kept across refreshes: an open form stays open

  async function refresh(): Promise<void> {
    let inbox;
    try {
      inbox = await api().Inbox(false);
    } catch {
      return; // the service is not up yet: the next change tells again
    }
    const here = readHere(inbox.items ?? [], actions.store.sessionId);
    if (here.length) {
      const marked = await Promise.all(here.map((it) => api().InboxMark(it.id, true, false).then(() => true, () => false)));
      if (marked.every(Boolean)) return; // marking emits inbox:changed: the next refresh shows them read
    }
    button.textContent = inboxLabel(inbox.unread);
    if (box.hidden) return;
    const items = inbox.items ?? [];
    let tasks: Task[] = [];
    let background = false;
    try {
      [tasks, background] = await Promise.all([api().Tasks(), api().RunTasksWhenClosed()]);
    } catch (ex) {
      flash(errText(ex));
    }
    const act = async (f: () => Promise<unknown>, ok?: string) => {
      try {
        await f();
        if (ok) flash(ok, true);
      } catch (ex) {
        flash(errText(ex));
      }
      await refresh();
    };
    const list = renderInbox(items, {
      open: (it) => void act(async () => {
        await api().InboxMark(it.id, true, false);
        await actions.refreshSessions();
        await actions.openSession(it.session_id!);
        box.hidden = true;
      }),
      decide: (it, choice) => void act(() => api().InboxDecide(it.id, choice), choice === "allow" ? "Allowed: the task goes on." : "Denied: the task goes on without it."),
      done: (it) => void act(() => api().InboxMark(it.id, true, true)),
    });
    const bg = h("input", { type: "checkbox", id: "run-tasks-closed" }) as HTMLInputElement;
    bg.checked = background;
    bg.addEventListener("change", () =>
      void act(() => api().SetRunTasksWhenClosed(bg.checked), bg.checked ? "Tasks will run while Jarvis is closed." : "Tasks run only while Jarvis is open."),
    );
    const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "\u2715");
    close.addEventListener("click", () => (box.hidden = true));
    const openForm = async (t: Task | null) => {
      let agents: Agent[] = [];
      try {
        agents = await api().Agents();
      } catch (ex) {
        flash(errText(ex));
      }
      const form = renderTaskForm(t, {
        agents,
        preview: (sched, tz) => api().PreviewSchedule(sched, tz),
        tools: (agent) => api().TaskTools(agent),
        save: (x) => api().SaveTask(x),
        saved: (x) => {
          formSlot.replaceChildren();
          flash(`Saved \u201c${x.name}\u201d: ${x.schedule_words ?? x.schedule}.`, true);
          void refresh();
        },
        cancel: () => formSlot.replaceChildren(),
      });
      formSlot.replaceChildren(form);
      form.querySelector("input")?.focus();
    };
    const taskList = renderTasks(tasks, {
      edit: (t) => void openForm(t),
      pause: (t, paused) => void act(() => api().SaveTask({ ...t, disabled: paused }), paused ? `Paused \u201c${t.name}\u201d.` : `Resumed \u201c${t.name}\u201d.`),
      remove: (t) => {
        if (confirm(`Delete the task \u201c${t.name}\u201d? Its past runs and their conversations stay.`)) void act(() => api().DeleteTask(t.id), `Deleted \u201c${t.name}\u201d.`);
      },
      runNow: (t) => void act(() => api().RunTaskNow(t.id), `\u201c${t.name}\u201d runs now; its result comes to the Inbox.`),
    });
    const add = h("button", { class: "small", type: "button", "data-action": "new-task" }, "New task");
    add.addEventListener("click", () => void openForm(null));
    box.replaceChildren(
      h("div", { class: "panel-head" }, h("h2", {}, "Inbox"), close),
      list,
      h("div", { class: "panel-head" }, h("h3", {}, "Scheduled tasks"), add),
      formSlot,
      taskList,
      h("label", { class: "run-closed" }, bg, " Run tasks when Jarvis is closed"),
    );
  }

  button.addEventListener("click", () => {
    box.hidden = !box.hidden;
    void refresh();
  });
  on("inbox:changed", () => void refresh());
  actions.store.subscribe("opened", () => void refresh());
  void refresh();
  return { refresh };
}
