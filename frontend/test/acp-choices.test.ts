// @vitest-environment jsdom
// An ACP agent's conversation: its modes and models as a picker above the
// composer (the choice sent and kept), its file changes as diff cards that
// say whether the turn's undo restores them, and an A2A agent's skills
// under it in the sidebar.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { Transcript } from "../src/transcript";
import { mountConversation } from "../src/views/conversation";
import { mountSidebar } from "../src/views/sidebar";
import { bridgeOf, fakeBridge, flush, loadPage, type FakeBridge } from "./fakebridge";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });
const $ = (s: string) => document.querySelector(s) as HTMLElement;
const offered = {
  modes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code", description: "Writes code" }],
  mode: "ask",
  models: [{ id: "small", name: "Small" }, { id: "large", name: "Large" }],
  model: "small",
};

describe("ACP agents in the window", () => {
  let fb: FakeBridge;
  let store: Store;
  let actions: Actions;
  beforeEach(async () => {
    loadPage();
    fb = fakeBridge();
    fb.agents = [
      { agentId: "codex", displayName: "Codex", type: "chat", provider: "acp", status: { state: "ok" } },
      { agentId: "travel", displayName: "Travel", type: "a2a", status: { state: "ok" }, a2a: { name: "Travel", skills: [{ id: "book", name: "Book a trip", description: "flights and <b>hotels</b>" }, { id: "weather", name: "Weather" }] } },
    ];
    store = new Store();
    actions = new Actions(store, bridgeOf(fb));
    mountSidebar(actions);
    mountConversation(actions);
    await actions.start();
  });

  it("the status of kind agent_choices is the picker's, not a transcript line; a diff is a card", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "go", turn_id: "t1" }));
    const eff = t.apply(ev(2, "status", { kind: "agent_choices", turn_id: "t1", text: "Codex: mode Ask", choices: offered }));
    expect(eff.choices).toEqual(offered);
    expect(t.items.map((i) => i.kind)).toEqual(["user"]);
    t.apply(ev(3, "status", { kind: "diff", turn_id: "t1", text: "", diff: { path: "/w/a.txt", old: "a\n", new: "b\n", undo: "turn" } }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "diff"]);
    expect(t.items[1].diff!.path).toBe("/w/a.txt");
  });

  it("shows the modes and models the agent reported, sends a choice, and says why one is refused", async () => {
    await actions.newSession("codex");
    const id = store.sessionId!;
    await flush();
    const picker = () => $(".agent-choice");
    expect(picker().hidden).toBe(true); // nothing known yet
    fb.choices.set(id, { ...offered });
    actions.onStreamEvent({ sessionId: id, id: "1", type: "status", data: { kind: "agent_choices", turn_id: "t", text: "Codex: mode Ask, model Small", choices: offered } });
    expect(picker().hidden).toBe(false);
    const mode = picker().querySelector('select[data-choice="mode"]') as HTMLSelectElement;
    const model = picker().querySelector('select[data-choice="model"]') as HTMLSelectElement;
    expect([...mode.options].map((o) => [o.value, o.textContent, o.title])).toEqual([["ask", "Ask", ""], ["code", "Code", "Writes code"]]);
    expect([mode.value, model.value]).toEqual(["ask", "small"]);
    expect(document.querySelectorAll("#messages .msg.status")).toHaveLength(0);

    mode.value = "code";
    mode.dispatchEvent(new Event("change"));
    await flush();
    expect(fb.calls.filter((c) => c.method === "ChooseForAgent").map((c) => c.args)).toEqual([[id, "code", ""]]);
    expect(fb.choices.get(id)!.mode).toBe("code");
    expect((picker().querySelector('select[data-choice="mode"]') as HTMLSelectElement).value).toBe("code");

    fb.failNext("ChooseForAgent", "the agent refused the model \"large\": over quota");
    const model2 = picker().querySelector('select[data-choice="model"]') as HTMLSelectElement;
    model2.value = "large";
    model2.dispatchEvent(new Event("change"));
    await flush();
    expect(picker().querySelector(".form-error")!.textContent).toBe("the agent refused the model \"large\": over quota");
    expect(model2.value).toBe("small"); // back to the model in use
  });

  it("reads the kept choice when an ACP conversation opens, and hides for other agents", async () => {
    fb.sessions.push({ sessionId: "old", agentId: "codex" });
    fb.choices.set("old", { mode: "code" }); // the agent is not running: the kept choice alone
    await actions.openSession("old");
    await flush();
    expect($(".agent-choice").hidden).toBe(false);
    expect($(".agent-choice").textContent).toContain("Chosen: mode code (sent when the agent starts)");
    await actions.newSession("travel");
    await flush();
    expect($(".agent-choice").hidden).toBe(true);
  });

  it("shows a diff card saying whether the turn's undo restores the file", async () => {
    await actions.newSession("codex");
    const id = store.sessionId!;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "status", data: { kind: "diff", turn_id: "t", text: "", diff: { path: "/w/a.txt", title: "Edit a.txt", old: "one\ntwo\n", new: "one\n<b>2</b>\n", undo: "turn" } } });
    actions.onStreamEvent({ sessionId: id, id: "2", type: "status", data: { kind: "diff", turn_id: "t", text: "", diff: { path: "/w/new.txt", new: "hi\n", undo: "none" } } });
    const cards = [...document.querySelectorAll("#messages .msg.diff .diff-card")] as HTMLElement[];
    expect(cards).toHaveLength(2);
    expect(cards[0].querySelector(".diff-title")!.textContent).toBe("Changed /w/a.txt · Edit a.txt");
    expect([...cards[0].querySelectorAll("pre span")].map((s) => s.textContent)).toEqual(["  one\n", "- two\n", "+ <b>2</b>\n"]);
    expect(cards[0].querySelector("b")).toBeNull(); // the agent's text is text
    expect(cards[0].querySelector(".diff-undo")!.textContent).toContain("“Undo these changes” under this turn restores it");
    expect(cards[1].querySelector(".diff-title")!.textContent).toBe("Created /w/new.txt");
    expect(cards[1].querySelector(".diff-undo")!.textContent).toContain("cannot undo this change");
  });

  it("shows the kept diff cards and mode or model changes when a conversation is opened again", async () => {
    fb.sessions.push({ sessionId: "kept", agentId: "codex" });
    fb.messages.set("kept", [
      { id: 1, role: "status", text: "Codex: mode changed to plan by you", meta: { kind: "agent_choice", by: "user", mode: "plan" }, createdAt: "2026-11-29T03:00:00Z" },
      { id: 2, role: "user", text: "fix it", turnId: "t1", createdAt: "2026-11-29T03:00:01Z" },
      { id: 3, role: "status", text: "Codex changed /w/a.txt (through Jarvis: the turn's undo restores it)", turnId: "t1", createdAt: "2026-11-29T03:00:02Z",
        meta: { kind: "diff", diff: { tool_call_id: "c1", title: "Edit a.txt", path: "/w/a.txt", old: "one\ntwo\n", new: "one\n2\n", undo: "turn" } } },
      { id: 4, role: "status", text: "Codex created /w/b.txt (itself: Jarvis has no copy of the file as it was, so it cannot undo this)", turnId: "t1", createdAt: "2026-11-29T03:00:03Z",
        meta: { kind: "diff", diff: { path: "/w/b.txt", new: "hi\n", undo: "none" } } },
      { id: 5, role: "status", text: "Codex: mode changed to Code by the agent", turnId: "t1", meta: { kind: "agent_choice", by: "agent", mode: "code" }, createdAt: "2026-11-29T03:00:04Z" },
      { id: 6, role: "assistant", text: "edited /w/a.txt", turnId: "t1", createdAt: "2026-11-29T03:00:05Z" },
    ]);
    await actions.openSession("kept");
    await flush();
    const msgs = [...document.querySelectorAll("#messages > .msg")] as HTMLElement[];
    expect(msgs.map((m) => m.classList[1])).toEqual(["status", "user", "diff", "diff", "status", "assistant"]);
    expect(msgs[0].textContent).toBe("Codex: mode changed to plan by you");
    expect(msgs[4].textContent).toBe("Codex: mode changed to Code by the agent");
    const cards = [...document.querySelectorAll("#messages .msg.diff .diff-card")] as HTMLElement[];
    expect(cards[0].querySelector(".diff-title")!.textContent).toBe("Changed /w/a.txt · Edit a.txt");
    expect([...cards[0].querySelectorAll("pre span")].map((s) => s.textContent)).toEqual(["  one\n", "- two\n", "+ 2\n"]);
    expect(cards[0].querySelector(".diff-undo")!.textContent).toContain("“Undo these changes” under this turn restores it");
    expect(cards[1].querySelector(".diff-title")!.textContent).toBe("Created /w/b.txt");
    expect(cards[1].querySelector(".diff-undo")!.textContent).toContain("cannot undo this change");
  });

  it("a change of mode or model is a line that stays, live as after a reload", () => {
    const t = new Transcript();
    t.apply(ev(1, "status", { kind: "agent_choice", text: "Codex: model changed to Large by you" }));
    t.apply(ev(2, "user.message", { text: "go", turn_id: "t1" }));
    t.apply(ev(3, "assistant.final", { text: "done", turn_id: "t1" }));
    expect(t.items.map((i) => [i.kind, i.text])).toEqual([["status", "Codex: model changed to Large by you"], ["user", "go"], ["assistant", "done"]]);
  });

  it("lists an A2A agent's skills under it", () => {
    const skills = $('.agent-group[data-agent="travel"] details.agent-skills');
    expect(skills.querySelector("summary")!.textContent).toBe("2 skills");
    expect([...skills.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["Book a trip — flights and <b>hotels</b>", "Weather"]);
    expect(document.querySelector('.agent-group[data-agent="codex"] details.agent-skills')).toBeNull();
  });

  it("offers the agent's sign-in methods on its sign-in error: a key saved retries the turn", async () => {
    await actions.newSession("codex");
    const id = store.sessionId!;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "user.message", data: { text: "hi", turn_id: "t1" } });
    actions.onStreamEvent({ sessionId: id, id: "2", type: "error", data: { code: "acp_auth_required", message: "Agent \"codex\": the agent needs you to sign in before it can start", turn_id: "t1" } });
    const err = $("#messages .msg.error");
    (err.querySelector('[data-action="sign-in"]') as HTMLElement).click();
    await flush();
    const forms = [...err.querySelectorAll(".sign-in-method")] as HTMLElement[];
    expect(forms.map((f) => f.dataset.method)).toEqual(["claude-login", "chatgpt", "anthropic-api-key"]);
    const key = forms[2].querySelector('input[data-var="ANTHROPIC_API_KEY"]') as HTMLInputElement;
    expect(key.type).toBe("password");
    key.value = "sk-test";
    (forms[2] as HTMLFormElement).dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    await flush();
    expect(fb.calls.filter((c) => c.method === "SignInAgent").map((c) => c.args)).toEqual([["codex", "anthropic-api-key", { ANTHROPIC_API_KEY: "sk-test" }]]);
    expect(key.value).toBe(""); // not kept in the page
    expect(fb.calls.some((c) => c.method === "SendVersion" && c.args[1] === "t1")).toBe(true); // the turn asked again
  });

  it("runs a terminal login for the user, says what it runs, and retries; an agent's own login that fails is said in words", async () => {
    await actions.newSession("codex");
    const id = store.sessionId!;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "user.message", data: { text: "hi", turn_id: "t2" } });
    actions.onStreamEvent({ sessionId: id, id: "2", type: "error", data: { code: "acp_auth_required", message: "Agent \"codex\": the agent needs you to sign in before it can start", turn_id: "t2" } });
    const err = $("#messages .msg.error");
    (err.querySelector('[data-action="sign-in"]') as HTMLElement).click();
    await flush();
    const [term, own] = [...err.querySelectorAll(".sign-in-method")] as HTMLElement[];
    expect(term.querySelector("code")!.textContent).toBe("node '/usr/lib/node_modules/claude agent/cli.js'");
    const button = term.querySelector("button")!;
    expect(button.textContent).toBe("Open a terminal and sign in");
    const sentBefore = fb.calls.filter((c) => c.method === "SendVersion").length;
    button.click();
    expect(term.querySelector('[role="status"]')!.textContent).toBe("Waiting for the sign-in in the terminal…");
    await flush();
    await flush();
    expect(fb.calls.filter((c) => c.method === "RunAgentLogin").map((c) => c.args)).toEqual([["codex", "claude-login"]]);
    expect(fb.calls.filter((c) => c.method === "SendVersion").length).toBe(sentBefore + 1); // the turn asked again

    (own.querySelector("button") as HTMLElement).click();
    await flush();
    await flush();
    expect(fb.calls.filter((c) => c.method === "SignInAgent").map((c) => c.args)).toEqual([["codex", "chatgpt", {}]]);
    expect(own.querySelector('[role="alert"]')!.textContent).toContain("the sign-in did not complete");
    expect(fb.calls.filter((c) => c.method === "SendVersion").length).toBe(sentBefore + 1); // not asked again
  });
});
