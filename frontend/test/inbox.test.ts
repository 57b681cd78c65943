import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { InboxItem, Task } from "../src/bridge";
import { inboxLabel, readHere, renderInbox, renderTasks } from "../src/inbox";

const item = (x: Partial<InboxItem>): InboxItem => ({ id: "in_1", kind: "result", title: "Morning note", state: "open", read: false, created_at: "2026-06-01T08:00:05Z", ...x });

describe("the Inbox", () => {
  it("counts unread items on its button", () => {
    expect(inboxLabel(0)).toBe("Inbox");
    expect(inboxLabel(3)).toBe("Inbox (3)");
  });
  it("offers Allow and Deny on a waiting approval, and says how a settled one ended", () => {
    const got: string[] = [];
    const on = { open: (it: InboxItem) => got.push("open " + it.id), decide: (it: InboxItem, c: string) => got.push(c + " " + it.id), done: (it: InboxItem) => got.push("done " + it.id) };
    const el = renderInbox([
      item({ id: "ap_1", kind: "approval", state: "pending", title: "Tidy: waiting for your approval to delete files in the workspace", session_id: "g_1" }),
      item({ id: "ap_0", kind: "approval", state: "expired", title: "Tidy: waiting for your approval to delete files in the workspace" }),
      item({ id: "in_2", body: "Summary written to notes/today.md", session_id: "g_2", read: true }),
    ], on);
    const rows = el.querySelectorAll("li.inbox-item");
    expect(rows.length).toBe(3);
    expect(rows[0].classList.contains("unread")).toBe(true);
    expect(rows[0].querySelector("[data-action=done]")).toBeNull(); // decided first, never just dismissed
    (rows[0].querySelector("[data-action=allow]") as HTMLButtonElement).click();
    (rows[0].querySelector("[data-action=open]") as HTMLButtonElement).click();
    expect(rows[1].querySelector("[data-action=allow]")).toBeNull();
    expect(rows[1].textContent).toContain("expired");
    expect(rows[2].textContent).toContain("Summary written");
    (rows[2].querySelector("[data-action=done]") as HTMLButtonElement).click();
    expect(got).toEqual(["allow ap_1", "open ap_1", "done in_2"]);
  });
  it("shows each task's schedule and tools in words", () => {
    const el = renderTasks([{ id: "t", name: "Morning note", prompt: "p", schedule: "every weekday at 8:00", schedule_words: "every weekday (Monday to Friday) at 8:00",
      policy: "This task may read files in the workspace; nothing else.", next_run: "2026-06-02T08:00:00Z" }]);
    expect(el.textContent).toContain("every weekday (Monday to Friday) at 8:00");
    expect(el.textContent).toContain("This task may read files in the workspace; nothing else.");
    expect(renderTasks([]).textContent).toMatch(/No scheduled tasks/);
  });
});

describe("the Inbox panel's look", () => {
  it("is a panel as the window's others are: no list bullets, a body's lines kept, the title apart from its time", () => {
    const style = document.createElement("style");
    style.textContent = readFileSync(resolve(__dirname, "../src/style.css"), "utf8");
    document.head.append(style);
    const box = document.createElement("section");
    box.id = "inbox";
    box.append(renderInbox([item({ id: "ap_1", kind: "approval", state: "pending", title: "Daily note: waiting for your approval", body: "path: notes/2026-11-30.md\nWaits until Mon 30 Nov 08:00; then denied." })],
      { open: () => {}, decide: () => {}, done: () => {} }));
    document.body.append(box);
    try {
      const css = (sel: string) => getComputedStyle(box.querySelector(sel) as HTMLElement);
      expect(getComputedStyle(box).overflow).toBe("auto"); // a panel of its own height, as #mcp
      expect(css(".inbox-list").listStyleType).toBe("none");
      expect(css(".inbox-body").whiteSpace).toBe("pre-line");
      expect(css(".inbox-head").display).toBe("flex");
      expect(css(".inbox-actions").display).toBe("flex");
    } finally {
      box.remove();
      style.remove();
    }
  });
});

describe("the task list", () => {
  it("offers Run now, Pause, Edit and Delete, and only Run now on a task of tasks.json", () => {
    const got: string[] = [];
    const on = { edit: (t: Task) => got.push("edit " + t.id), pause: (t: Task, p: boolean) => got.push(`pause ${t.id} ${p}`), remove: (t: Task) => got.push("delete " + t.id), runNow: (t: Task) => got.push("run " + t.id) };
    const el = renderTasks([
      { id: "a", name: "Digest", prompt: "p", schedule: "hourly", source: "api" },
      { id: "b", name: "Paused", prompt: "p", schedule: "hourly", source: "conversation", disabled: true },
      { id: "c", name: "From file", prompt: "p", schedule: "hourly", source: "file" },
    ], on);
    const rows = el.querySelectorAll("li.task");
    const click = (i: number, a: string) => (rows[i].querySelector(`[data-action=${a}]`) as HTMLButtonElement).click();
    click(0, "run");
    click(0, "pause");
    click(0, "edit");
    click(0, "delete");
    click(1, "resume");
    click(2, "run");
    expect(rows[1].textContent).toContain("(paused)");
    expect(rows[2].querySelector("[data-action=edit]")).toBeNull();
    expect(rows[2].textContent).toContain("from tasks.json");
    expect(got).toEqual(["run a", "pause a true", "edit a", "delete a", "pause b false", "run c"]);
  });
});

describe("answers that arrived while away", () => {
  it("are read once their conversation is open; a waiting approval stays to be decided", () => {
    const items = [
      item({ id: "a1", kind: "answer", title: "Researcher answered", session_id: "g_open" }),
      item({ id: "a2", kind: "answer", title: "Researcher answered", session_id: "g_other" }),
      item({ id: "a3", kind: "answer", session_id: "g_open", read: true }),
      item({ id: "p1", kind: "approval", state: "pending", session_id: "g_open" }),
    ];
    expect(readHere(items, "g_open").map((x) => x.id)).toEqual(["a1"]);
    expect(readHere(items, "")).toEqual([]);
  });
});
