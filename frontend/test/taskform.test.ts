import { describe, expect, it } from "vitest";
import type { Agent, Task, TaskPreview } from "../src/bridge";
import { presetOf, renderTaskForm, runTime, scheduleText } from "../src/taskform";

const agents: Agent[] = [
  { agentId: "assistant", displayName: "Assistant", type: "chat", status: { state: "ready" } },
  { agentId: "coder", displayName: "Coder", type: "acp", status: { state: "ready" } },
];
const tools = [
  { name: "memory_search", words: "search your notes (memory)" },
  { name: "read_file", words: "read files in the workspace" },
  { name: "write_file", words: "write files in the workspace" },
];

function setup(task: Task | null, preview: (s: string, tz: string) => Promise<TaskPreview>) {
  const calls = { previews: [] as string[], tools: [] as string[], saved: [] as Partial<Task>[], done: [] as Task[] };
  const form = renderTaskForm(task, {
    agents,
    timeZone: "Europe/Berlin",
    preview: (s, tz) => {
      calls.previews.push(`${s} | ${tz}`);
      return preview(s, tz);
    },
    tools: async (a) => {
      calls.tools.push(a);
      return tools;
    },
    save: async (t) => {
      calls.saved.push(t);
      if (t.name === "") throw new Error("the task has no name");
      return { id: t.id ?? "task_1", name: t.name!, prompt: t.prompt!, schedule: t.schedule!, schedule_words: "every weekday (Monday to Friday) at 8:00" };
    },
    saved: (t) => calls.done.push(t),
    cancel: () => {},
  });
  document.body.replaceChildren(form);
  return { form, calls };
}

const input = (form: HTMLElement, name: string) => form.querySelector(`[name=${name}]`) as HTMLInputElement & HTMLSelectElement;
function set(el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, v: string) {
  el.value = v;
  el.dispatchEvent(new Event("input"));
  el.dispatchEvent(new Event("change"));
}

describe("schedules from the form's presets", () => {
  it("says each preset as the service reads it, and reads it back", () => {
    expect(scheduleText("hourly", "08:00", "", "")).toBe("hourly");
    expect(scheduleText("weekdays", "08:00", "", "")).toBe("every weekday at 8:00");
    expect(scheduleText("monday", "17:30", "", "")).toBe("every Monday at 17:30");
    expect(scheduleText("once", "09:05", "2026-12-01", "")).toBe("at 2026-12-01 09:05");
    expect(scheduleText("cron", "", "", " 0 8 * * 1-5 ")).toBe("0 8 * * 1-5");
    expect(presetOf("every weekday at 8:00")).toMatchObject({ preset: "weekdays", time: "08:00" });
    expect(presetOf("every Monday")).toMatchObject({ preset: "monday", time: "09:00" });
    expect(presetOf("at 2026-12-01 09:05")).toMatchObject({ preset: "once", date: "2026-12-01", time: "09:05" });
    expect(presetOf("hourly").preset).toBe("hourly");
    expect(presetOf("*/15 9-17 * * 1-5")).toMatchObject({ preset: "cron", cron: "*/15 9-17 * * 1-5" });
  });
  it("shows a run's time in the given time zone", () => {
    expect(runTime("2026-10-26T07:00:00Z", "Europe/Berlin")).toMatch(/08:00/);
    expect(runTime("2026-10-26T07:00:00Z", "America/New_York")).toMatch(/03:00/);
  });
});

describe("the task form", () => {
  it("previews the next three runs in your time zone, offers the agent's tools in words, and creates the task", async () => {
    const { form, calls } = setup(null, async (s) => {
      if (s === "every weekday at 8:00") return { schedule_words: "every weekday (Monday to Friday) at 8:00 (Europe/Berlin)", next_runs: ["2026-10-26T08:00:00+01:00", "2026-10-27T08:00:00+01:00", "2026-10-28T08:00:00+01:00"] };
      if (s === "0 25 * * *") throw new Error("\"0 25 * * *\" is neither a known schedule nor a cron expression");
      return { schedule_words: s, next_runs: [] };
    });
    await form.settle();
    expect(calls.previews[0]).toBe("every weekday at 8:00 | Europe/Berlin");
    const runs = form.querySelectorAll(".next-runs li");
    expect(runs.length).toBe(3);
    expect(runs[0].textContent).toMatch(/08:00/);
    expect(form.textContent).toContain("every weekday (Monday to Friday) at 8:00");
    expect(form.textContent).toContain("Times are in your time zone (Europe/Berlin)");
    // only chat agents run tasks
    expect([...input(form, "agent").options].map((o) => o.value)).toEqual(["", "assistant"]);
    expect(form.textContent).toContain("read files in the workspace");
    expect(form.querySelector(".task-policy")!.textContent).toBe("This task may use no tools: it can only answer in words.");
    for (const n of ["read_file", "memory_search"]) {
      const box = form.querySelector(`input[name=tool][value=${n}]`) as HTMLInputElement;
      box.checked = true;
      box.dispatchEvent(new Event("change"));
    }
    expect(form.querySelector(".task-policy")!.textContent).toBe("This task may search your notes (memory), read files in the workspace; nothing else.");
    // a cron expression the service refuses: its words shown, nothing saved
    set(input(form, "preset"), "cron");
    set(input(form, "cron"), "0 25 * * *");
    await form.settle();
    expect(form.querySelector(".task-preview")!.textContent).toContain("neither a known schedule");
    expect((form.querySelector("[name=time]")!.parentElement as HTMLElement).hidden).toBe(true);
    set(input(form, "preset"), "weekdays");
    set(input(form, "time"), "08:00");
    set(input(form, "name"), "Daily note");
    set(form.querySelector("[name=prompt]") as HTMLTextAreaElement, "summarise yesterday's notes into today's note");
    set(input(form, "catch_up"), "skip");
    set(input(form, "approval_wait"), "2");
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await form.settle();
    expect(calls.saved).toEqual([{ name: "Daily note", prompt: "summarise yesterday's notes into today's note", agent: undefined, schedule: "every weekday at 8:00",
      time_zone: "Europe/Berlin", catch_up: "skip", tools: ["memory_search", "read_file"], approval_wait_minutes: 120 }]);
    expect(calls.done.map((t) => t.id)).toEqual(["task_1"]);
  });
  it("edits a task with its tools fixed, and says the service's refusal", async () => {
    const task: Task = { id: "task_9", name: "Weekly", prompt: "tidy", agent: "assistant", schedule: "every Monday at 9:00", time_zone: "America/New_York",
      catch_up: "once", tools: ["read_file"], approval_wait_minutes: 60, source: "api" };
    const { form, calls } = setup(task, async () => ({ schedule_words: "every Monday at 9:00", next_runs: [] }));
    await form.settle();
    expect(calls.previews[0]).toBe("every Monday at 9:00 | America/New_York");
    expect(calls.tools).toEqual(["assistant"]);
    expect(input(form, "preset").value).toBe("monday");
    expect(input(form, "agent").disabled).toBe(true);
    const boxes = form.querySelectorAll("input[name=tool]");
    expect(boxes.length).toBe(1);
    expect((boxes[0] as HTMLInputElement).disabled).toBe(true);
    expect(form.textContent).toContain("decided when it is created");
    expect(form.textContent).toContain("No run to come");
    set(input(form, "name"), "");
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await form.settle();
    expect(calls.saved[0]).toMatchObject({ id: "task_9", schedule: "every Monday at 9:00", tools: ["read_file"], approval_wait_minutes: 60 });
    expect(form.querySelector("[role=alert]")!.textContent).toBe("the task has no name");
    expect(calls.done).toEqual([]);
  });
});
