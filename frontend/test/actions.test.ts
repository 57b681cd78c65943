// The store and the actions against a fake of the bridge: what each action
// asks of the Go side and what the store holds and tells afterwards.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { fakeBridge, type FakeBridge, bridgeOf } from "./fakebridge";

let fb: FakeBridge;
let store: Store;
let actions: Actions;
let told: string[];

beforeEach(() => {
  fb = fakeBridge();
  store = new Store();
  actions = new Actions(store, bridgeOf(fb));
  told = [];
  for (const t of ["agents", "sessions", "messages", "prompts", "notice", "setup", "opened", "effect"] as const) store.subscribe(t, () => told.push(t));
});

describe("store", () => {
  it("tells subscribers of a topic, and stops after unsubscribe", () => {
    const got: string[] = [];
    const off = store.subscribe("conn", (id) => got.push(id));
    store.publish("conn", "a");
    off();
    store.publish("conn", "b");
    expect(got).toEqual(["a"]);
  });

  it("keeps telling the others when one subscriber throws", () => {
    const got: string[] = [];
    store.subscribe("conn", () => {
      throw new Error("view broke");
    });
    store.subscribe("conn", (id) => got.push(id));
    const err = console.error;
    console.error = () => {};
    store.publish("conn", "x");
    console.error = err;
    expect(got).toEqual(["x"]);
  });
});

describe("actions", () => {
  it("starts: agents, sessions, and opens the newest session with its history", async () => {
    fb.sessions.push({ sessionId: "old", agentId: "general" });
    fb.messages.set("old", [{ id: 1, role: "user", text: "hello" }, { id: 2, role: "assistant", text: "hi there" }]);
    await actions.start();
    expect(store.agentId).toBe("general");
    expect(store.sessionId).toBe("old");
    expect(store.transcript("old").items.map((i) => [i.kind, i.text])).toEqual([["user", "hello"], ["assistant", "hi there"]]);
    expect(told).toContain("opened");
  });

  it("gives loaded tool cards their decisions back from the audit log (after a restart)", async () => {
    fb.sessions.push({ sessionId: "old", agentId: "general" });
    fb.messages.set("old", [
      { id: 1, role: "user", text: "tidy up" },
      { id: 2, role: "assistant", text: "", toolCalls: [{ id: "c1", function: { name: "run_command", arguments: '{"program":"rm"}' } }, { id: "c2", function: { name: "write_file", arguments: '{"path":"a"}' } }] },
      { id: 3, role: "tool", toolCallId: "c1", text: "denied: not allowed" },
      { id: 4, role: "tool", toolCallId: "c2", text: "wrote 1 byte" },
    ]);
    fb.decisions.set("old", [
      { toolCallId: "c1", proposedRisk: "risky", class: "risky", decision: "denied", decidedBy: "user" },
      { toolCallId: "c2", proposedRisk: "risky", class: "risky", decision: "allowed", decidedBy: "session" },
    ]);
    await actions.start();
    const cards = store.transcript("old").items.filter((i) => i.kind === "tool").map((i) => [i.tool!.risk, i.tool!.decision, i.tool!.decidedBy]);
    expect(cards).toEqual([["risky", "denied", "user"], ["risky", "allowed", "session"]]);
  });

  it("sends with no session open: starts one with the selected agent, shows the words at once, then sends", async () => {
    await actions.start();
    const sent = await actions.send("What is 2+2?");
    expect(sent).toBe(true);
    expect(fb.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["NewSession", "OpenSession", "Send"]));
    const id = store.sessionId;
    expect(fb.calls.find((c) => c.method === "Send")!.args).toEqual([id, "What is 2+2?"]);
    expect(store.transcript(id).items.at(-1)).toMatchObject({ kind: "user", text: "What is 2+2?" });
    expect(store.current()?.lastSnippet).toBe("What is 2+2?");
  });

  it("says nothing was sent when no session can be started, and sends nothing", async () => {
    await actions.start();
    fb.failNext("NewSession", "service unreachable");
    const notices: string[] = [];
    store.subscribe("notice", (n) => notices.push(n.text));
    expect(await actions.send("hello")).toBe(false);
    expect(fb.calls.some((c) => c.method === "Send")).toBe(false);
    expect(notices).toEqual(["service unreachable"]);
  });

  it("shows a failed send as an error in the conversation", async () => {
    await actions.start();
    await actions.newSession();
    fb.failNext("Send", "the agent is busy");
    await actions.send("hi");
    expect(store.transcript(store.sessionId).items.at(-1)).toMatchObject({ kind: "error" });
    expect(store.transcript(store.sessionId).items.at(-1)!.text).toContain("the agent is busy");
  });

  it("deletes a session: gone from the list, its transcript dropped, nothing open", async () => {
    await actions.start();
    const s = (await actions.newSession())!;
    await actions.deleteSession(s.sessionId);
    expect(store.sessions.some((x) => x.sessionId === s.sessionId)).toBe(false);
    expect(store.transcripts.has(s.sessionId)).toBe(false);
    expect(store.sessionId).toBe("");
  });

  it("follows a session deleted by another client", async () => {
    await actions.start();
    const s = (await actions.newSession())!;
    actions.onStreamEvent({ sessionId: s.sessionId, id: "9", type: "session", data: { change: "deleted" } });
    expect(store.session(s.sessionId)).toBeUndefined();
    expect(store.sessionId).toBe("");
  });

  it("renames only when the name changed, and keeps the old name when the service refuses", async () => {
    await actions.start();
    const s = (await actions.newSession())!;
    await actions.renameSession(s.sessionId, "Trip plans");
    expect(store.session(s.sessionId)!.name).toBe("Trip plans");
    await actions.renameSession(s.sessionId, "Trip plans");
    expect(fb.calls.filter((c) => c.method === "RenameSession")).toHaveLength(1);
    fb.failNext("RenameSession", "name too long");
    await actions.renameSession(s.sessionId, "x".repeat(500));
    expect(store.session(s.sessionId)!.name).toBe("Trip plans");
  });

  it("answers a prompt with edited arguments as compact JSON, and refuses text that is not a JSON object", async () => {
    actions.onPrompts([{ id: "p1", tool_call_id: "t1", tool: "write_file", arguments: {}, risk: "risky", reason: "", choices: ["once", "deny"], deadline: "" }]);
    expect(await actions.answerPrompt("once", "[1]")).toMatch(/^Not valid JSON: the arguments must be a JSON object/);
    expect(await actions.answerPrompt("once", "{oops")).toMatch(/^Not valid JSON/);
    expect(fb.calls.some((c) => c.method === "AnswerPrompt")).toBe(false);
    expect(await actions.answerPrompt("once", '{ "path": "a.txt" }', 0, "ignored without deny", "ignored without always")).toBe("");
    expect(fb.calls.at(-1)).toEqual({ method: "AnswerPrompt", args: ["p1", { choice: "once", edited_arguments: '{"path":"a.txt"}', scope: 0, why: "", chat: "" }] });
    // A denial never sends edits, nor a scope; it sends the reason.
    await actions.answerPrompt("deny", "{oops", 2, "not now");
    expect(fb.calls.at(-1)).toEqual({ method: "AnswerPrompt", args: ["p1", { choice: "deny", edited_arguments: "", scope: 0, why: "not now", chat: "" }] });
  });

  it("lists, revokes and edits permission rules, reading the list again after each change", async () => {
    fb.rules = [
      { tool: "write_file", args: { path: "notes.txt" }, action: "allow" },
      { tool: "run_command", args: { program: "rm" }, action: "deny" },
    ];
    await actions.start();
    expect(store.workspace).toBe("/home/ada/Jarvis");
    expect(store.rules).toHaveLength(2);
    expect(await actions.revokeRule(0)).toBe("");
    expect(store.rules).toEqual([{ tool: "run_command", args: { program: "rm" }, action: "deny" }]);
    expect(await actions.editRule(0, { tool: "run_command", args: { program: "rm" }, action: "ask" })).toBe("");
    expect(store.rules[0].action).toBe("ask");
    // Changed elsewhere meanwhile: refused, and the page shows the new list.
    fb.rules = [{ tool: "notify", action: "allow" }];
    expect(await actions.revokeRule(0)).toMatch(/changed meanwhile/);
    expect(store.rules).toEqual([{ tool: "notify", action: "allow" }]);
  });

  it("exports a conversation as Markdown and as JSON, with tool calls and their decisions", async () => {
    fb.sessions.push({ sessionId: "old", agentId: "general", name: "Notes" });
    fb.messages.set("old", [
      { id: 1, role: "user", text: "save it" },
      { id: 2, role: "assistant", text: "Saving.", toolCalls: [{ id: "c1", function: { name: "write_file", arguments: '{"path":"a.txt"}' } }] },
      { id: 3, role: "tool", toolCallId: "c1", text: "wrote 2 bytes", meta: { decision: "allowed" } },
      { id: 4, role: "assistant", text: "Done **now**." },
    ]);
    await actions.start();
    await actions.exportSession("old", "md");
    const md = fb.calls.at(-1)!.args[2] as string;
    expect(fb.calls.at(-1)!.args.slice(0, 2)).toEqual(["old", "md"]);
    expect(md).toMatch(/^# Notes\n/);
    expect(md).toContain("**You:**\n\nsave it");
    expect(md).toContain("**Tool `write_file`** (allowed)");
    expect(md).toContain("wrote 2 bytes");
    expect(md).toContain("**Assistant:**\n\nDone **now**.");
    await actions.exportSession("old", "json");
    const js = JSON.parse(fb.calls.at(-1)!.args[2] as string);
    expect(js.session.sessionId).toBe("old");
    expect(js.items.map((i: any) => i.kind)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("opens the setup form when the selected agent has no provider", async () => {
    fb.agents = [{ agentId: "general", displayName: "G", type: "chat", status: { state: "unconfigured", detail: "no provider" } }];
    const setup: string[] = [];
    store.subscribe("setup", (s) => setup.push(s.message));
    await actions.start();
    expect(setup.at(-1)).toBe("no provider");
  });
});
