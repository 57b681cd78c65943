// The window's task form: create or edit a scheduled task — its prompt, its
// agent, its schedule (a preset: hourly, every weekday at a time, every
// Monday at a time, once at a date and time; or a cron expression) with the
// next three runs previewed in your time zone, its catch-up rule, the tools
// it may use (chosen among the agent's, shown in words; fixed once created)
// and how long its approvals wait. The service checks and stores it
// (POST/PUT /v1/tasks); the schedule is read in your time zone.
import type { Agent, Task, TaskPreview, TaskTool } from "./bridge";
import { h } from "./view";

export type Preset = "hourly" | "weekdays" | "monday" | "once" | "cron";

/** The schedule the service reads, from the form's preset and fields. */
export function scheduleText(preset: Preset, time: string, date: string, cron: string): string {
  const hm = time.replace(/^0(\d)/, "$1"); // "08:00" → "8:00"
  switch (preset) {
    case "hourly":
      return "hourly";
    case "weekdays":
      return `every weekday at ${hm}`;
    case "monday":
      return `every Monday at ${hm}`;
    case "once":
      return `at ${date} ${time}`;
    case "cron":
      return cron.trim();
  }
}

/** The preset and fields a stored schedule fills the form with. */
export function presetOf(schedule: string): { preset: Preset; time: string; date: string; cron: string } {
  const s = schedule.trim().toLowerCase().replace(/\s+/g, " ");
  const pad = (t: string) => (t.length === 4 ? "0" + t : t);
  let m: RegExpMatchArray | null;
  if (s === "hourly" || s === "every hour") return { preset: "hourly", time: "08:00", date: "", cron: "" };
  if ((m = s.match(/^every weekdays? at (\d{1,2}:\d{2})$/))) return { preset: "weekdays", time: pad(m[1]), date: "", cron: "" };
  if ((m = s.match(/^every mondays?(?: at (\d{1,2}:\d{2}))?$/))) return { preset: "monday", time: pad(m[1] ?? "9:00"), date: "", cron: "" };
  if ((m = s.match(/^(?:once )?at (\d{4}-\d{2}-\d{2})[ t](\d{1,2}:\d{2})$/))) return { preset: "once", time: pad(m[2]), date: m[1], cron: "" };
  return { preset: "cron", time: "08:00", date: "", cron: schedule.trim() };
}

/** Your time zone (the schedule of a new task is read in it). */
export function userTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch {
    return "";
  }
}

/** A run's time in your time zone, in words ("Mon 26 Oct, 08:00"). */
export function runTime(iso: string, tz = userTimeZone()): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return iso;
  const o: Intl.DateTimeFormatOptions = { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  try {
    return d.toLocaleString(undefined, tz ? { ...o, timeZone: tz } : o);
  } catch {
    return d.toLocaleString(undefined, o);
  }
}

export interface TaskFormDeps {
  agents: Agent[];
  preview(schedule: string, timeZone: string): Promise<TaskPreview>;
  tools(agentId: string): Promise<TaskTool[]>;
  save(t: Partial<Task>): Promise<Task>;
  saved(t: Task): void;
  cancel(): void;
  timeZone?: string;
}

const presets: [Preset, string][] = [
  ["hourly", "Every hour"],
  ["weekdays", "Every weekday at…"],
  ["monday", "Every Monday at…"],
  ["once", "Once, at…"],
  ["cron", "Cron expression"],
];

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const l = h("label", { class: "field" }, h("span", {}, label), control);
  if (hint) l.append(h("span", { class: "hint" }, hint));
  return l;
}

/** The form, filled from task when editing; settle() waits for its pending look-ups (tests). */
export function renderTaskForm(task: Task | null, deps: TaskFormDeps): HTMLElement & { settle(): Promise<void> } {
  const tz = task?.time_zone || deps.timeZone || userTimeZone();
  const init = presetOf(task?.schedule ?? "every weekday at 8:00");
  const form = h("form", { class: "task-form", "aria-label": task ? `Edit task ${task.name}` : "New task" }) as HTMLFormElement & { settle(): Promise<void> };
  const name = h("input", { name: "name", required: "", value: task?.name ?? "" }) as HTMLInputElement;
  const prompt = h("textarea", { name: "prompt", rows: "3", required: "" }) as HTMLTextAreaElement;
  prompt.value = task?.prompt ?? "";
  const agent = h("select", { name: "agent" }) as HTMLSelectElement;
  agent.append(h("option", { value: "" }, "The default agent"));
  for (const a of deps.agents.filter((a) => a.type === "chat")) agent.append(h("option", { value: a.agentId }, a.displayName || a.agentId));
  agent.value = task?.agent ?? "";
  if (task) agent.disabled = true; // its tools were chosen among this agent's
  const preset = h("select", { name: "preset" }) as HTMLSelectElement;
  for (const [v, label] of presets) preset.append(h("option", { value: v }, label));
  preset.value = init.preset;
  const time = h("input", { name: "time", type: "time", value: init.time }) as HTMLInputElement;
  const date = h("input", { name: "date", type: "date", value: init.date }) as HTMLInputElement;
  const cron = h("input", { name: "cron", placeholder: "0 8 * * 1-5", value: init.cron }) as HTMLInputElement;
  const catchUp = h("select", { name: "catch_up" }) as HTMLSelectElement;
  catchUp.append(h("option", { value: "once" }, "run it once when Jarvis is back"), h("option", { value: "skip" }, "skip it"));
  catchUp.value = task?.catch_up || "once";
  const wait = h("input", { name: "approval_wait", type: "number", min: "1", value: String(Math.round((task?.approval_wait_minutes || 1440) / 60)) }) as HTMLInputElement;
  const preview = h("div", { class: "task-preview", "aria-live": "polite" });
  const toolBox = h("fieldset", { class: "task-tools" }, h("legend", {}, "What the task may do"));
  const policy = h("div", { class: "hint task-policy" });
  const error = h("div", { class: "error", role: "alert" });
  const fields = { time: field("Time", time), date: field("Date", date), cron: field("Cron expression", cron, "minute hour day month weekday, e.g. 0 8 * * 1-5") };

  const chosen = new Set(task?.tools ?? []);
  let toolWords = new Map<string, string>();
  const sayPolicy = () => {
    const parts = [...chosen].sort().map((n) => toolWords.get(n) ?? `use the tool \u201c${n}\u201d`);
    policy.textContent = parts.length ? `This task may ${parts.join(", ")}; nothing else.` : "This task may use no tools: it can only answer in words.";
  };
  async function loadTools(): Promise<void> {
    toolBox.replaceChildren(h("legend", {}, "What the task may do"));
    let list: TaskTool[] = [];
    try {
      list = await deps.tools(agent.value);
    } catch (ex) {
      toolBox.append(h("div", { class: "error" }, String((ex as Error)?.message ?? ex)));
    }
    toolWords = new Map(list.map((t) => [t.name, t.words]));
    const shown = task ? list.filter((t) => chosen.has(t.name)) : list;
    for (const t of shown) {
      const box = h("input", { type: "checkbox", name: "tool", value: t.name }) as HTMLInputElement;
      box.checked = chosen.has(t.name);
      box.disabled = !!task; // a task's tools are decided when it is created
      box.addEventListener("change", () => {
        if (box.checked) chosen.add(t.name);
        else chosen.delete(t.name);
        sayPolicy();
      });
      toolBox.append(h("label", { class: "tool-choice", title: t.name }, box, " " + t.words));
    }
    if (task) toolBox.append(h("div", { class: "hint" }, "A task's tools are decided when it is created; make a new task to give it others."));
    sayPolicy();
  }

  const schedule = () => scheduleText(preset.value as Preset, time.value, date.value, cron.value);
  let seq = 0;
  async function showPreview(): Promise<void> {
    const p = preset.value as Preset;
    fields.time.hidden = p === "hourly" || p === "cron";
    fields.date.hidden = p !== "once";
    fields.cron.hidden = p !== "cron";
    const mine = ++seq;
    try {
      const got = await deps.preview(schedule(), tz);
      if (mine !== seq) return;
      const runs = got.next_runs.length
        ? h("ol", { class: "next-runs" }, ...got.next_runs.map((r) => h("li", {}, runTime(r, tz))))
        : h("div", { class: "hint" }, "No run to come: this time has passed.");
      preview.replaceChildren(h("div", {}, `Runs ${got.schedule_words}. Next:`), runs);
    } catch (ex) {
      if (mine !== seq) return;
      preview.replaceChildren(h("div", { class: "error" }, String((ex as Error)?.message ?? ex)));
    }
  }
  let pending: Promise<void>[] = [showPreview(), loadTools()];
  for (const el of [preset, time, date, cron]) el.addEventListener("input", () => pending.push(showPreview()));
  preset.addEventListener("change", () => pending.push(showPreview()));
  agent.addEventListener("change", () => {
    chosen.clear();
    pending.push(loadTools());
  });

  const save = h("button", { type: "submit", class: "primary" }, task ? "Save" : "Create task");
  const cancel = h("button", { type: "button" }, "Cancel");
  cancel.addEventListener("click", () => deps.cancel());
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const hours = Number(wait.value);
    const t: Partial<Task> = {
      ...(task ? { id: task.id, disabled: task.disabled } : {}),
      name: name.value.trim(), prompt: prompt.value, agent: agent.value || undefined, schedule: schedule(), time_zone: tz,
      catch_up: catchUp.value, tools: [...chosen].sort(), approval_wait_minutes: hours > 0 ? Math.round(hours * 60) : undefined,
    };
    pending.push(
      deps.save(t).then(
        (out) => {
          error.textContent = "";
          deps.saved(out);
        },
        (ex) => {
          error.textContent = String((ex as Error)?.message ?? ex);
        },
      ),
    );
  });

  form.append(
    h("h3", {}, task ? `Edit \u201c${task.name}\u201d` : "New task"),
    field("Name", name),
    field("What to do", prompt),
    field("Agent", agent),
    field("When", preset),
    fields.time, fields.date, fields.cron,
    h("div", { class: "hint" }, `Times are in your time zone${tz ? ` (${tz})` : ""}.`),
    preview,
    field("If a run is missed (computer asleep, Jarvis not running)", catchUp, "never more than one run for a missed stretch"),
    toolBox, policy,
    field("An approval waits (hours)", wait, "then the call is denied as expired"),
    error,
    h("div", { class: "form-actions" }, save, cancel),
  );
  form.settle = async () => {
    while (pending.length) {
      const p = pending;
      pending = [];
      await Promise.all(p);
    }
  };
  return form;
}
