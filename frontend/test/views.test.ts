// @vitest-environment jsdom
// The views mounted on the window's real markup (index.html), driven like a
// user, with the store and actions over a fake of the bridge.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { mountConversation } from "../src/views/conversation";
import { mountHeader } from "../src/views/header";
import { mountNotice } from "../src/views/notice";
import { mountPrompt } from "../src/views/prompt";
import { mountSidebar } from "../src/views/sidebar";
import { fakeBridge, flush, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

let fb: FakeBridge;
let store: Store;
let actions: Actions;
const $ = (s: string) => document.querySelector(s) as HTMLElement;

beforeEach(async () => {
  loadPage();
  fb = fakeBridge();
  store = new Store();
  actions = new Actions(store, bridgeOf(fb));
  const flash = mountNotice(store);
  mountSidebar(actions);
  mountHeader(actions, flash);
  mountConversation(actions);
  mountPrompt(actions);
  await actions.start();
});

function typeAndEnter(text: string): void {
  const input = $("#input") as HTMLTextAreaElement;
  input.value = text;
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
}

describe("views", () => {
  it("sends on Enter: a session appears in the sidebar, the message in the conversation, the title in the header", async () => {
    typeAndEnter("Plan a picnic");
    await flush();
    await flush();
    expect($("#input") as HTMLTextAreaElement).toHaveProperty("value", "");
    expect($("#messages .msg.user .msg-text")?.textContent).toBe("Plan a picnic");
    expect(document.querySelectorAll('.agent-group[data-agent="general"] li.session.current')).toHaveLength(1);
    expect($("#session-title").textContent).toBe("Plan a picnic");
    expect($("#stop").hidden).toBe(false);
  });

  it("streams a reply into one message and hides Stop when it ends", async () => {
    await actions.newSession();
    const id = store.sessionId;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "assistant.delta", data: { text: "Hel", turn_id: "t" } });
    actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.delta", data: { text: "lo", turn_id: "t" } });
    expect(document.querySelectorAll("#messages .msg.assistant")).toHaveLength(1);
    expect($("#messages .msg.assistant").classList.contains("streaming")).toBe(true);
    actions.onStreamEvent({ sessionId: id, id: "3", type: "assistant.final", data: { text: "Hello", turn_id: "t" } });
    expect($("#messages .msg.assistant").classList.contains("streaming")).toBe(false);
    expect($("#stop").hidden).toBe(true);
  });

  it("shows the stream state in the header", async () => {
    await actions.newSession();
    actions.onStreamState({ sessionId: store.sessionId, state: "reconnecting", attempt: 2, retryInMs: 3000, error: "connection refused" });
    expect($("#conn").textContent).toBe("Reconnecting in 3 s");
    expect($("#conn").title).toBe("connection refused");
  });

  it("shows a prompt from the queue and hides it when the queue is empty", () => {
    actions.onPrompts([{ id: "p1", tool_call_id: "t1", tool: "write_file", arguments: { path: "/tmp/x" }, risk: "risky", reason: "writes a file", choices: ["once", "session", "always", "deny"], deadline: new Date(Date.now() + 60000).toISOString() }]);
    expect($("#prompt").hidden).toBe(false);
    expect($("#prompt-title").textContent).toBe("Write the file /tmp/x?");
    actions.onPrompts([]);
    expect($("#prompt").hidden).toBe(true);
  });
});

describe("following the end of the conversation", () => {
  // jsdom does no layout: the box's heights are set by the test.
  function layout() {
    const box = $("#messages");
    let height = 1000;
    Object.defineProperty(box, "clientHeight", { configurable: true, get: () => 100 });
    Object.defineProperty(box, "scrollHeight", { configurable: true, get: () => height });
    return { box, grow: (px: number) => (height += px), bottom: () => height - 100 };
  }

  it("keeps following after a tool card grows the view, stops when the user scrolls up, and shows a message the user sends", async () => {
    await actions.newSession();
    const id = store.sessionId;
    const { box, grow, bottom } = layout();
    box.scrollTop = bottom();
    box.dispatchEvent(new Event("scroll"));
    actions.onStreamEvent({ sessionId: id, id: "1", type: "tool.request", data: { id: "c1", name: "write_file", arguments: { path: "a" }, turn_id: "t" } });
    // The card's result, a reply rendered off the thread: the view grows
    // by more than a screen between two events.
    grow(400);
    actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.delta", data: { text: "more", turn_id: "t" } });
    expect(box.scrollTop).toBe(1400);
    // The user scrolls up to read: new output no longer pulls the view down.
    box.scrollTop = 200;
    box.dispatchEvent(new Event("scroll"));
    grow(50);
    expect(($('[data-action="to-end"]') as HTMLElement).hidden).toBe(true);
    actions.onStreamEvent({ sessionId: id, id: "3", type: "assistant.delta", data: { text: " text", turn_id: "t" } });
    expect(box.scrollTop).toBe(200);
    // "↓ New messages" says there is more below, and brings the end back.
    const toEnd = $('[data-action="to-end"]') as HTMLElement;
    expect(toEnd.hidden).toBe(false);
    toEnd.click();
    expect(box.scrollTop).toBe(1450);
    expect(toEnd.hidden).toBe(true);
    box.scrollTop = 200;
    box.dispatchEvent(new Event("scroll"));
    // A message the user sends is always brought into view.
    typeAndEnter("next question");
    await flush();
    expect(box.scrollTop).toBe(1450);
  });
});

describe("waiting for the first word", () => {
  it("says which model it waits for, with the seconds, until the reply starts", async () => {
    vi.useFakeTimers();
    try {
      fb.agents = [{ agentId: "general", displayName: "General Assistant", type: "chat", model: "llama3.2", status: { state: "ok" } }];
      await actions.refreshAgents();
      typeAndEnter("Hello?");
      await vi.advanceTimersByTimeAsync(0);
      const id = store.sessionId;
      expect($("#messages .waiting").textContent).toBe("Waiting for llama3.2…");
      await vi.advanceTimersByTimeAsync(9000);
      expect($("#messages .waiting").textContent).toBe("Waiting for llama3.2… 9 s");
      actions.onStreamEvent({ sessionId: id, id: "1", type: "user.message", data: { text: "Hello?", turn_id: "t1" } });
      actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.delta", data: { text: "Hi", turn_id: "t1" } });
      expect(document.querySelector("#messages .waiting")).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the status in the header", () => {
  it("is not green and Live while the model server is down, and recovers with the next reply", async () => {
    await actions.newSession();
    const id = store.sessionId;
    actions.onStreamState({ sessionId: id, state: "live", attempt: 0 });
    expect($("#conn").textContent).toBe("Live");
    actions.onStreamEvent({ sessionId: id, id: "1", type: "error", data: { code: "upstream_unreachable", message: "the model server at http://127.0.0.1:11434/v1 is not answering", turn_id: "t" } });
    expect($("#conn").textContent).toBe("Model unreachable");
    expect($("#conn").classList.contains("live")).toBe(false);
    expect($("#conn").title).toContain("127.0.0.1:11434");
    actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.final", data: { text: "back", turn_id: "t2" } });
    expect($("#conn").textContent).toBe("Live");
  });
});

describe("message actions", () => {
  it("copies, edits in place, regenerates and retries in place (the message is never posted twice), and shows Stop as a state with Continue", async () => {
    let copied = "";
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t: string) => void (copied = t) } });
    typeAndEnter("What is **2+2**?");
    await flush();
    await flush();
    const id = store.sessionId;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "user.message", data: { text: "What is **2+2**?", turn_id: "t1" } });
    actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.final", data: { text: "It is **4**.", turn_id: "t1" } });
    const reply = $("#messages .msg.assistant");
    (reply.querySelector('[data-action="copy"]') as HTMLElement).click();
    await flush();
    expect(copied).toBe("It is **4**.");
    const versions = () => fb.calls.filter((c) => c.method === "SendVersion").map((c) => c.args);
    const sends = () => fb.calls.filter((c) => c.method === "Send").map((c) => c.args[1]);
    const users = () => Array.from(document.querySelectorAll("#messages .msg.user .msg-text")).map((e) => e.textContent);
    // Edit in place: the message becomes a field; Save & send makes a new version of its turn.
    ($("#messages .msg.user").querySelector('[data-action="edit"]') as HTMLElement).click();
    const field = $("#messages .msg.user .edit-field") as HTMLTextAreaElement;
    expect(field.value).toBe("What is **2+2**?");
    expect(document.activeElement).toBe(field);
    field.value = "What is 3+3?";
    ($("#messages .msg.user") .querySelector('[data-action="edit-send"]') as HTMLElement).click();
    await flush();
    expect(versions()).toEqual([[id, "t1", "What is 3+3?"]]);
    expect(users()).toEqual(["What is 3+3?"]);
    expect(document.querySelectorAll("#messages .msg.assistant")).toHaveLength(0);
    // The turn's end reads the transcript again (for its versions): the service's, as it now is.
    fb.messages.set(id, [
      { id: 3, role: "user", text: "What is 3+3?", turnId: "t2" },
      { id: 4, role: "assistant", text: "Six.", turnId: "t2" },
    ]);
    fb.versions.set(id, [{ shown: "t2", turns: ["t1", "t2"] }]);
    actions.onStreamEvent({ sessionId: id, id: "3", type: "user.message", data: { text: "What is 3+3?", turn_id: "t2" } });
    actions.onStreamEvent({ sessionId: id, id: "4", type: "assistant.final", data: { text: "Six.", turn_id: "t2" } });
    await flush();
    await flush();
    expect($("#messages .msg.user .versions").getAttribute("data-versions")).toBe("2/2");
    // Regenerate: the same words as a new version of t2, shown once.
    ($("#messages .msg.assistant").querySelector('[data-action="regenerate"]') as HTMLElement).click();
    await flush();
    expect(versions().at(-1)).toEqual([id, "t2", "What is 3+3?"]);
    expect(users()).toEqual(["What is 3+3?"]);
    expect(document.querySelectorAll("#messages .msg.assistant")).toHaveLength(0);
    fb.messages.set(id, [
      { id: 5, role: "user", text: "What is 3+3?", turnId: "t3" },
      { id: 6, role: "status", text: "upstream said HTTP 500", turnId: "t3", meta: { kind: "error", code: "upstream_error" } },
    ]);
    actions.onStreamEvent({ sessionId: id, id: "5", type: "user.message", data: { text: "What is 3+3?", turn_id: "t3" } });
    actions.onStreamEvent({ sessionId: id, id: "6", type: "error", data: { code: "upstream_error", message: "upstream said HTTP 500: {\"error\": \"boom\"}", turn_id: "t3" } });
    await flush();
    const err = $("#messages .msg.error");
    expect(err.querySelector(".msg-text")!.textContent).toBe("The model server failed to answer.");
    (err.querySelector('[data-action="retry"]') as HTMLElement).click();
    await flush();
    expect(versions().at(-1)).toEqual([id, "t3", "What is 3+3?"]);
    expect(users()).toEqual(["What is 3+3?"]);
    expect(sends()).toEqual(["What is **2+2**?"]);
    fb.messages.set(id, [
      { id: 7, role: "user", text: "What is 3+3?", turnId: "t4" },
      { id: 8, role: "status", text: "Stopped: the turn was cancelled.", turnId: "t4", meta: { kind: "stopped", code: "cancelled" } },
    ]);
    actions.onStreamEvent({ sessionId: id, id: "7", type: "user.message", data: { text: "What is 3+3?", turn_id: "t4" } });
    actions.onStreamEvent({ sessionId: id, id: "8", type: "error", data: { code: "cancelled", message: "cancelled", turn_id: "t4" } });
    const stopped = $("#messages .msg.stopped");
    expect(stopped.getAttribute("role")).toBeNull();
    expect(stopped.querySelector(".msg-text")!.textContent).toBe("Stopped.");
    (stopped.querySelector('[data-action="continue"]') as HTMLElement).click();
    await flush();
    expect(sends().at(-1)).toBe("Continue from where you stopped.");
  });

  it("shows a message's versions as ‹ 2 / 3 › and shows another on a click", async () => {
    const s = (await actions.newSession())!;
    fb.messages.set(s.sessionId, [
      { id: 1, role: "user", text: "Hi", turnId: "a" },
      { id: 2, role: "assistant", text: "Hello", turnId: "a" },
      { id: 5, role: "user", text: "Tell a joke", turnId: "c" },
      { id: 6, role: "assistant", text: "Second joke", turnId: "c" },
    ]);
    fb.versions.set(s.sessionId, [{ shown: "c", turns: ["b", "c", "d"] }]);
    await actions.reload(s.sessionId);
    const user = document.querySelectorAll("#messages .msg.user")[1] as HTMLElement;
    expect(user.querySelector(".versions")!.getAttribute("data-versions")).toBe("2/3");
    expect(document.querySelectorAll("#messages .versions")).toHaveLength(1);
    (user.querySelector('[data-action="version-prev"]') as HTMLElement).click();
    await flush();
    expect(fb.calls.filter((c) => c.method === "ShowVersion").map((c) => c.args)).toEqual([[s.sessionId, "b"]]);
  });
});

describe("no model set up", () => {
  it("sends nothing, opens the setup with plain words, and the header says so instead of Live", async () => {
    const { mountSetup } = await import("../src/views/setup");
    mountSetup(actions, () => {});
    fb.agents = [{ agentId: "general", displayName: "General Assistant", type: "chat", status: { state: "unconfigured", detail: "no provider: set JARVIS_SECRET_OPENAI or edit config.json" } }];
    await actions.refreshAgents();
    typeAndEnter("hello");
    await flush();
    expect(fb.calls.some((c) => c.method === "Send" || c.method === "NewSession")).toBe(false);
    expect(($("#input") as HTMLTextAreaElement).value).toBe("hello");
    expect($("#setup").hidden).toBe(false);
    expect($("#notice").textContent).toContain("Set up a model");
    expect(document.body.textContent).not.toMatch(/JARVIS_|config\.json/);
    expect($("#conn").textContent).toBe("No model set up");
  });

  it("a stored error names no variable or config key, and offers Set up a model", async () => {
    const s = (await actions.newSession())!;
    fb.messages.set(s.sessionId, [
      { id: 1, role: "user", text: "hello", turnId: "t1" },
      { id: 2, role: "status", text: "no model provider is configured: set JARVIS_SECRET_OPENAI or add to config.json", turnId: "t1", meta: { kind: "error", code: "provider_not_configured" } },
    ]);
    await actions.reload(s.sessionId);
    const err = $("#messages .msg.error");
    expect(err.textContent).not.toMatch(/JARVIS_|config\.json/);
    expect(err.querySelector('[data-action="setup"]')!.textContent).toBe("Set up a model");
  });
});

describe("the conversation list", () => {
  it("names a conversation once from its first message, Markdown stripped", async () => {
    typeAndEnter("## Plan a **picnic** for [Saturday](https://example.com)\n\nwith details");
    await flush();
    await flush();
    const id = store.sessionId;
    expect(fb.calls.find((c) => c.method === "RenameSession")?.args).toEqual([id, "Plan a picnic for Saturday"]);
    typeAndEnter("second message");
    await flush();
    expect(fb.calls.filter((c) => c.method === "RenameSession")).toHaveLength(1);
    expect($("#session-title").textContent).toBe("Plan a picnic for Saturday");
  });

  it("deletes without a blocking dialog, with Undo for a few seconds", async () => {
    vi.useFakeTimers();
    try {
      const s = (await actions.newSession())!;
      const row = () => document.querySelector(`.session[data-session="${s.sessionId}"]`) as HTMLElement | null;
      row()!.querySelector<HTMLElement>('[data-action="delete"]')!.click();
      expect(row()).toBeNull();
      $('#notice [data-action="undo"]').click();
      expect(row()).not.toBeNull();
      vi.advanceTimersByTime(10_000);
      expect(fb.calls.some((c) => c.method === "DeleteSession")).toBe(false);
      row()!.querySelector<HTMLElement>('[data-action="delete"]')!.click();
      vi.advanceTimersByTime(5_000);
      expect(fb.calls.some((c) => c.method === "DeleteSession")).toBe(false);
      vi.advanceTimersByTime(1_500);
      expect(fb.calls.filter((c) => c.method === "DeleteSession").map((c) => c.args)).toEqual([[s.sessionId]]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("keyboard", () => {
  it("Ctrl+N starts a conversation, Ctrl+K finds one by title, Esc stops a reply, Ctrl+= zooms", async () => {
    const { mountKeys } = await import("../src/views/keys");
    mountKeys(actions);
    const key = (k: string, ctrl = true) => document.body.dispatchEvent(new KeyboardEvent("keydown", { key: k, ctrlKey: ctrl, bubbles: true, cancelable: true }));
    key("n");
    await flush();
    await flush();
    expect(fb.calls.filter((c) => c.method === "NewSession")).toHaveLength(1);
    await actions.renameSession(store.sessionId, "Garden plans");
    await actions.newSession();
    await actions.renameSession(store.sessionId, "Tax return");
    key("k");
    const filter = document.activeElement as HTMLInputElement;
    expect(filter.id).toBe("session-filter");
    filter.value = "garden";
    filter.dispatchEvent(new Event("input"));
    expect(Array.from(document.querySelectorAll(".session .session-title")).map((x) => x.textContent)).toEqual(["Garden plans"]);
    // The text of a conversation loaded in the window matches too.
    actions.onStreamEvent({ sessionId: store.sessionId, id: "9", type: "assistant.final", data: { text: "Your refund is 120 euros.", turn_id: "t9" } });
    filter.value = "refund";
    filter.dispatchEvent(new Event("input"));
    expect(Array.from(document.querySelectorAll(".session .session-title")).map((x) => x.textContent)).toEqual(["Tax return"]);
    typeAndEnter("a long question");
    await flush();
    key("Escape", false);
    await flush();
    expect(fb.calls.some((c) => c.method === "Cancel")).toBe(true);
    key("=");
    expect(document.documentElement.style.getPropertyValue("--zoom")).toBe("1.1");
    key("0");
    expect(document.documentElement.style.getPropertyValue("--zoom")).toBe("1");
  });
});

describe("search across conversations", () => {
  it("finds a conversation the window never opened by a message's text, shows the snippet, and drops stale answers", async () => {
    fb.sessions = [
      { sessionId: "bread", agentId: "general", name: "Weekend", updatedAt: "2026-11-25T10:00:00Z" },
      { sessionId: "trip", agentId: "general", name: "Lisbon", updatedAt: "2026-11-25T11:00:00Z" },
    ];
    fb.messages.set("bread", [{ id: 1, role: "assistant", text: "Let the sourdough rise overnight." }]);
    await actions.refreshSessions();
    vi.useFakeTimers();
    try {
      const filter = $("#session-filter") as HTMLInputElement;
      const titles = () => Array.from(document.querySelectorAll(".session .session-title")).map((x) => x.textContent);
      filter.value = "sourdough";
      filter.dispatchEvent(new Event("input"));
      expect(titles()).toEqual([]); // no title has it; the service is asked after a pause
      await vi.advanceTimersByTimeAsync(250);
      expect(titles()).toEqual(["Weekend"]);
      expect($('[data-session="bread"] .session-snippet').textContent).toBe("Let the sourdough rise overnight.");
      expect(fb.calls.filter((c) => c.method === "SearchSessions").map((c) => c.args[0])).toEqual(["sourdough"]);
      // Typing on before the pause ends asks once, for the last text.
      filter.value = "lis";
      filter.dispatchEvent(new Event("input"));
      filter.value = "lisbon";
      filter.dispatchEvent(new Event("input"));
      await vi.advanceTimersByTimeAsync(250);
      expect(fb.calls.filter((c) => c.method === "SearchSessions").map((c) => c.args[0])).toEqual(["sourdough", "lisbon"]);
      expect(titles()).toEqual(["Lisbon"]);
      expect(document.querySelector(".session-snippet")).toBeNull();
      // A failed search says so and the title matches stay.
      fb.failNext("SearchSessions", "the service is not running");
      filter.value = "lisb";
      filter.dispatchEvent(new Event("input"));
      await vi.advanceTimersByTimeAsync(250);
      expect(titles()).toEqual(["Lisbon"]);
      expect($("#notice").textContent).toContain("Search failed: the service is not running");
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps each row's title with the matched words marked in a snippet under it; actions in a ⋯ menu, no ids in tooltips", async () => {
    fb.sessions = [
      { sessionId: "g_8c1f", agentId: "general", name: "Fix the README", updatedAt: "2026-11-25T10:00:00Z" },
      { sessionId: "g_9d2e", agentId: "general", lastSnippet: "```text\nreplaced 1 occurrence(s) in **README.md**", updatedAt: "2026-11-25T11:00:00Z" },
    ];
    fb.messages.set("g_8c1f", [{ id: 1, role: "assistant", text: "```\nreplaced 1 occurrence(s) in README.md\n```" }]);
    await actions.refreshSessions();
    vi.useFakeTimers();
    try {
      const filter = $("#session-filter") as HTMLInputElement;
      filter.value = "occurrence";
      filter.dispatchEvent(new Event("input"));
      await vi.advanceTimersByTimeAsync(250);
    } finally {
      vi.useRealTimers();
    }
    const row = $('[data-session="g_8c1f"]');
    expect(row.querySelector(".session-title")!.textContent).toBe("Fix the README");
    const snip = row.querySelector(".session-snippet")!;
    expect(snip.textContent).toBe("replaced 1 occurrence(s) in README.md");
    expect(Array.from(snip.querySelectorAll("mark")).map((m) => m.textContent)).toEqual(["occurrence"]);
    // An unnamed conversation's title is its text without Markdown.
    expect($('[data-session="g_9d2e"] .session-title').textContent).toBe("replaced 1 occurrence(s) in README.md");
    for (const el of Array.from(document.querySelectorAll("#agents [title]"))) expect(el.getAttribute("title")).not.toMatch(/g_8c1f|g_9d2e/);
    // A click on the title opens; rename is in the ⋯ menu.
    (row.querySelector(".session-title") as HTMLElement).click();
    await flush();
    expect(store.sessionId).toBe("g_8c1f");
    expect(store.renaming).toBe("");
    const menu = $('[data-session="g_8c1f"] .session-menu');
    expect(menu.hidden).toBe(true);
    ($('[data-session="g_8c1f"] [data-action="more"]') as HTMLElement).click();
    expect($('[data-session="g_8c1f"] .session-menu').hidden).toBe(false);
    ($('[data-session="g_8c1f"] [data-action="rename"]') as HTMLElement).click();
    expect(store.renaming).toBe("g_8c1f");
  });

  it("shows one flat list when there is one agent, and groups by agent when there are more", async () => {
    await actions.newSession();
    expect(document.querySelector(".agent-head")).toBeNull();
    expect($("#agents").classList.contains("flat")).toBe(true);
    fb.agents = [...fb.agents, { agentId: "coder", displayName: "Coder", type: "chat", status: { state: "ok" } }];
    await actions.refreshAgents();
    expect(Array.from(document.querySelectorAll(".agent-head .agent-name")).map((x) => x.textContent)).toEqual(["General Assistant", "Coder"]);
    expect($("#agents").classList.contains("flat")).toBe(false);
  });
});

describe("a new conversation", () => {
  it("names the agent and its model and offers a start", async () => {
    fb.agents = [{ agentId: "general", displayName: "General Assistant", type: "chat", model: "llama3.2", status: { state: "ok" } }];
    await actions.refreshAgents();
    await actions.newSession();
    expect($("#messages .empty").textContent).toContain("General Assistant (model llama3.2)");
    expect($("#agent-switch").textContent).toContain("llama3.2");
    $('#messages [data-action="starter"]').click();
    expect(($("#input") as HTMLTextAreaElement).value).toBe("Summarize the files in my workspace");
  });
});

describe("date groups", () => {
  it("lists conversations newest first under Today, Yesterday, Previous 7 days and Older", async () => {
    const { dateGroup } = await import("../src/view");
    const now = new Date(2026, 10, 25, 15, 0);
    expect([new Date(2026, 10, 25, 1, 0), new Date(2026, 10, 24, 23, 0), new Date(2026, 10, 20), new Date(2026, 9, 1)].map((d) => dateGroup(d.toISOString(), now))).toEqual(["Today", "Yesterday", "Previous 7 days", "Older"]);
    expect(dateGroup(undefined, now)).toBe("Older");
    const at = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    fb.sessions = [
      { sessionId: "a", agentId: "general", name: "old one", updatedAt: at(30) },
      { sessionId: "b", agentId: "general", name: "today", updatedAt: at(0) },
      { sessionId: "c", agentId: "general", name: "this week", updatedAt: at(3) },
      { sessionId: "d", agentId: "general", name: "also today", updatedAt: at(0) },
    ];
    await actions.refreshSessions();
    const rows = Array.from(document.querySelectorAll('.agent-group[data-agent="general"] .sessions > li')).map((x) => (x.classList.contains("date-group") ? `[${x.textContent}]` : x.querySelector(".session-title")!.textContent));
    expect(rows[0]).toBe("[Today]");
    expect(rows.slice(1, 3).sort()).toEqual(["also today", "today"]);
    expect(rows.slice(3)).toEqual(["[Previous 7 days]", "this week", "[Older]", "old one"]);
    // Pinned goes first, under its own heading, and back when unpinned.
    document.querySelector<HTMLElement>('.session[data-session="a"] [data-action="pin"]')!.click();
    await flush();
    const titles = () => Array.from(document.querySelectorAll('.agent-group[data-agent="general"] .sessions > li')).map((x) => (x.classList.contains("date-group") ? `[${x.textContent}]` : x.querySelector(".session-title")!.textContent));
    expect(titles().slice(0, 2)).toEqual(["[Pinned]", "old one"]);
    expect(fb.calls.at(-1)).toEqual({ method: "PinSession", args: ["a", true] });
    document.querySelector<HTMLElement>('.session[data-session="a"] [data-action="pin"]')!.click();
    await flush();
    expect(titles().at(-1)).toBe("old one");
  });

  it("exports every conversation from the sidebar, as Markdown or JSON, and says where", async () => {
    await actions.newSession();
    $('[data-action="export-all-md"]').click();
    await flush();
    expect($("#notice").textContent).toContain("Exported 1 conversations to /home/ada/conversations.md");
    $('[data-action="export-all-json"]').click();
    await flush();
    expect(fb.calls.filter((c) => c.method === "ExportAllConversations").map((c) => c.args[0])).toEqual(["md", "json"]);
    fb.failNext("ExportAllConversations", "there are no conversations at /x");
    $('[data-action="export-all-md"]').click();
    await flush();
    expect($("#notice").textContent).toContain("there are no conversations at /x");
  });
});

describe("copyText", () => {
  it("uses the app's native clipboard first, and the async API when that fails", async () => {
    const { copyText } = await import("../src/view");
    let native = "";
    let web = "";
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t: string) => void (web = t) } });
    (window as any).runtime = { ClipboardSetText: async (t: string) => ((native = t), true) };
    await copyText("one");
    expect([native, web]).toEqual(["one", ""]);
    (window as any).runtime = { ClipboardSetText: async () => false };
    await copyText("two");
    expect(web).toBe("two");
    delete (window as any).runtime;
  });
});

describe("a long history, a page at a time", () => {
  const titles = () => Array.from(document.querySelectorAll(".session .session-title")).map((x) => x.textContent);
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ sessionId: `g_${i}`, agentId: "general", name: `Conversation ${i}`, updatedAt: `2026-11-${String(28 - i).padStart(2, "0")}T10:00:00Z` }));

  it("loads the session list a page at a time with Load more, saying so while it loads, no conversation twice", async () => {
    fb.pageSize = 3;
    fb.sessions = many(7);
    await actions.refreshSessions();
    expect(titles()).toEqual(["Conversation 0", "Conversation 1", "Conversation 2"]);
    const more = () => $('[data-action="more-sessions"]') as HTMLButtonElement | null;
    expect(more()!.textContent).toBe("Load more");
    const release = fb.holdNext("SessionsPage");
    more()!.click();
    await flush();
    expect(more()!.textContent).toBe("Loading…");
    expect(more()!.disabled).toBe(true);
    expect(more()!.getAttribute("aria-busy")).toBe("true");
    more()!.click(); // a second click while loading asks nothing more
    release();
    await flush();
    await flush();
    expect(titles()).toHaveLength(6);
    // (The start and the refresh above asked for the first page.)
    expect(fb.calls.filter((c) => c.method === "SessionsPage").map((c) => c.args[1])).toEqual(["", "", "g_2"]);
    more()!.click();
    await flush();
    expect(titles()).toEqual(many(7).map((s) => s.name));
    expect(more()).toBeNull(); // the last page
  });

  it("loads the next page when the end of the list comes into view (infinite scroll)", async () => {
    const watched: { cb: (es: { isIntersecting: boolean }[]) => void; el?: Element }[] = [];
    vi.stubGlobal("IntersectionObserver", class {
      w: { cb: (es: { isIntersecting: boolean }[]) => void; el?: Element };
      constructor(cb: (es: { isIntersecting: boolean }[]) => void) {
        this.w = { cb };
        watched.push(this.w);
      }
      observe(el: Element) { this.w.el = el; }
      disconnect() { this.w.el = undefined; }
    });
    try {
      fb.pageSize = 4;
      fb.sessions = many(6);
      await actions.refreshSessions();
      expect(titles()).toHaveLength(4);
      const live = watched.filter((w) => w.el?.isConnected);
      expect(live).toHaveLength(1);
      live[0].cb([{ isIntersecting: true }]);
      await flush();
      await flush();
      expect(titles()).toHaveLength(6);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("pages through search hits, conversations not loaded yet included, with a visible search in progress", async () => {
    fb.pageSize = 2;
    fb.searchPageSize = 2;
    fb.sessions = many(5);
    for (const s of fb.sessions) fb.messages.set(s.sessionId, [{ id: 1, role: "user", text: `the garden of ${s.name}` }]);
    await actions.refreshSessions();
    expect(titles()).toHaveLength(2);
    vi.useFakeTimers();
    try {
      const filter = $("#session-filter") as HTMLInputElement;
      const release = fb.holdNext("SearchSessions");
      filter.value = "garden";
      filter.dispatchEvent(new Event("input"));
      await vi.advanceTimersByTimeAsync(250);
      const more = () => $('[data-action="more-results"]') as HTMLButtonElement | null;
      expect(more()!.textContent).toBe("Searching…");
      expect(more()!.getAttribute("aria-busy")).toBe("true");
      release();
      await vi.advanceTimersByTimeAsync(0);
      expect(titles()).toEqual(["Conversation 0", "Conversation 1"]);
      expect(more()!.textContent).toBe("More results");
      more()!.click();
      await vi.advanceTimersByTimeAsync(0);
      // Conversations 2 and 3 are past the list's loaded page: found all the same.
      expect(titles()).toEqual(["Conversation 0", "Conversation 1", "Conversation 2", "Conversation 3"]);
      expect($('[data-session="g_3"] .session-snippet').textContent).toBe("the garden of Conversation 3");
      more()!.click();
      await vi.advanceTimersByTimeAsync(0);
      expect(titles()).toHaveLength(5);
      expect(more()).toBeNull();
      expect(fb.calls.filter((c) => c.method === "SearchSessions").map((c) => c.args)).toEqual([["garden", ""], ["garden", "2"], ["garden", "4"]]);
      // Clearing the box shows the loaded list again, with its Load more.
      filter.value = "";
      filter.dispatchEvent(new Event("input"));
      expect(titles()).toHaveLength(2);
      expect($('[data-action="more-sessions"]')).not.toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });
});
