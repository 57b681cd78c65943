// @vitest-environment jsdom
// "Start Ollama": when the model server that did not answer is Ollama, its
// error offers to start it; the click shows progress and what came of it.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { plainError } from "../src/errors";
import { Store } from "../src/store";
import { mountConversation } from "../src/views/conversation";
import { mountHeader } from "../src/views/header";
import { mountNotice } from "../src/views/notice";
import { bridgeOf, fakeBridge, flush, loadPage, type FakeBridge } from "./fakebridge";

const $ = (s: string) => document.querySelector(s) as HTMLElement;
let actions: Actions;
let fb: FakeBridge;

beforeEach(async () => {
  loadPage();
  fb = fakeBridge();
  const store = new Store();
  actions = new Actions(store, bridgeOf(fb));
  const flash = mountNotice(store);
  mountHeader(actions, flash);
  mountConversation(actions);
  await actions.start();
});

const refused = "cannot connect to the model server at http://127.0.0.1:11434/v1 (connection refused): is it running?";

describe("Start Ollama", () => {
  it("is offered only when the server that did not answer is Ollama", () => {
    expect(plainError("upstream_unreachable", refused)).toEqual({ text: "Ollama, the model server, did not answer: it is probably not running.", actions: ["ollama", "retry", "setup"] });
    expect(plainError("upstream_unreachable", "cannot connect to the model server at http://127.0.0.1:1234/v1 (connection refused): is it running?").actions).not.toContain("ollama");
    expect(plainError("upstream_error", "ollama said HTTP 500").actions).not.toContain("ollama");
  });

  it("(and any error) never shows a route or a session id", () => {
    const busy = plainError("send_failed", "session g_2d3099b1518d275e28a7d6e3 is already answering a message; wait for it or cancel it (POST /v1/chat/cancel)");
    expect(busy.text).not.toMatch(/\/v1\/|g_2d30/);
  });

  it("starts it on a click, shows that it is starting, then that it runs", async () => {
    let calls = 0;
    let answer!: (v: { installed: boolean; running: boolean; started: boolean; message: string }) => void;
    fb.startOllama = () => {
      calls++;
      return new Promise((r) => (answer = r));
    };
    await actions.newSession();
    const id = actions.store.sessionId;
    actions.onStreamState({ sessionId: id, state: "live", attempt: 0 });
    actions.onStreamEvent({ sessionId: id, id: "1", type: "error", data: { code: "upstream_unreachable", message: refused, turn_id: "t" } });
    expect($("#conn").textContent).toBe("Model unreachable");
    const err = $("#messages .msg.error");
    expect(err.querySelector(".msg-text")!.textContent).toBe("Ollama, the model server, did not answer: it is probably not running.");
    expect(err.textContent).not.toMatch(/11434|connection refused/);
    const start = err.querySelector<HTMLButtonElement>('[data-action="start-ollama"]')!;
    expect(start.textContent).toBe("Start Ollama");
    start.click();
    expect(calls).toBe(1);
    expect(start.textContent).toBe("Starting Ollama…");
    expect(start.disabled).toBe(true);
    answer({ installed: true, running: true, started: true, message: "Ollama started and is answering." });
    await flush();
    expect(start.textContent).toBe("Ollama is running");
    expect($("#notice").textContent).toBe("Ollama started and is answering. Choose Retry to ask again.");
    expect(err.querySelector('[data-action="retry"]')).not.toBeNull();
    expect($("#conn").textContent).toBe("Live"); // re-checked: it answers
  });

  it("says how to install it when it is not installed, and can be tried again", async () => {
    fb.startOllama = () => ({ installed: false, running: false, started: false, message: "Ollama is not installed on this computer. Install it from ollama.com/download" });
    await actions.newSession();
    actions.onStreamEvent({ sessionId: actions.store.sessionId, id: "1", type: "error", data: { code: "upstream_unreachable", message: refused, turn_id: "t" } });
    const start = $('#messages .msg.error [data-action="start-ollama"]') as HTMLButtonElement;
    start.click();
    await flush();
    expect($("#notice").textContent).toContain("Ollama is not installed on this computer");
    expect(start.disabled).toBe(false);
    expect(start.textContent).toBe("Start Ollama");
  });
});
