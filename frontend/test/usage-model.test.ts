// @vitest-environment jsdom
// Item 14 of the desktop's conversation: the model switch in the header and
// the tokens and context under each reply.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import type { AppAPI, ProvidersInfo, SetProviderRequest } from "../src/bridge";
import { Store } from "../src/store";
import { usageLine } from "../src/usage";
import { mountConversation } from "../src/views/conversation";
import { mountHeader } from "../src/views/header";
import { modelChoices, mountModel } from "../src/views/model";
import { mountNotice } from "../src/views/notice";
import { fakeBridge, flush, loadPage, type FakeBridge } from "./fakebridge";

let fb: FakeBridge;
let store: Store;
let actions: Actions;
let providers: ProvidersInfo;
let saved: SetProviderRequest[];
const $ = (s: string) => document.querySelector(s) as HTMLElement;

// The provider routes as the service answers them: PUT saves the model and
// answers with the new state; the agents then report it.
function withProviders(api: AppAPI): AppAPI {
  return new Proxy(api, {
    get(target, method: string) {
      if (method === "Providers") return async () => structuredClone(providers);
      if (method === "SetProvider")
        return async (req: SetProviderRequest) => {
          saved.push(req);
          providers.providers[req.provider] = { baseUrl: req.baseUrl, model: req.model };
          fb.agents = fb.agents.map((a) => ({ ...a, model: req.model }));
          return structuredClone(providers);
        };
      return (target as any)[method];
    },
  });
}

beforeEach(async () => {
  loadPage();
  fb = fakeBridge();
  saved = [];
  providers = {
    configured: true,
    defaultProvider: "openai-compatible",
    providers: { "openai-compatible": { baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.2" } },
    openaiKeyStored: false,
    discovered: [
      { name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1/", models: ["llama3.2", "qwen2.5-coder"] },
      { name: "LM Studio", baseUrl: "http://127.0.0.1:1234/v1", models: ["phi-4"] },
    ],
  };
  fb.agents = [{ agentId: "general", displayName: "General Assistant", type: "chat", model: "llama3.2", status: { state: "ok" } }];
  store = new Store();
  actions = new Actions(store, () => withProviders(fb.api));
  const flash = mountNotice(store);
  mountHeader(actions, flash);
  mountModel(actions, flash);
  mountConversation(actions);
  await actions.start();
  await flush();
});

describe("the model switch", () => {
  it("offers the provider's model and the others its server lists, not another server's", () => {
    expect(modelChoices(providers)).toEqual(["llama3.2", "qwen2.5-coder"]);
    const sel = $("#model-switch") as HTMLSelectElement;
    expect($("#model-label").hidden).toBe(false);
    expect(Array.from(sel.options).map((o) => o.value)).toEqual(["llama3.2", "qwen2.5-coder"]);
    expect(sel.value).toBe("llama3.2");
    expect(sel.disabled).toBe(false);
  });

  it("saves the chosen model as the provider's, keeping its server, and shows it", async () => {
    const sel = $("#model-switch") as HTMLSelectElement;
    sel.value = "qwen2.5-coder";
    sel.dispatchEvent(new Event("change"));
    await flush();
    await flush();
    expect(saved).toEqual([{ provider: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5-coder" }]);
    expect(store.agents[0].model).toBe("qwen2.5-coder");
    expect(($("#model-switch") as HTMLSelectElement).value).toBe("qwen2.5-coder");
    expect(document.body.textContent).toContain("Model: qwen2.5-coder");
  });

  it("shows an agent's own model fixed, since the provider's model does not apply to it", async () => {
    fb.agents = [{ agentId: "general", displayName: "General Assistant", type: "chat", model: "gpt-4o", status: { state: "ok" } }];
    await actions.refreshAgents();
    await flush();
    const sel = $("#model-switch") as HTMLSelectElement;
    expect(sel.value).toBe("gpt-4o");
    expect(sel.disabled).toBe(true);
    expect(sel.title).toContain("its own model");
  });
});

describe("tokens and context under a reply", () => {
  it("formats what the model server counted and the window's share", () => {
    expect(usageLine({ prompt_tokens: 1000, completion_tokens: 234, requests: 1, context_tokens: 983, context_window: 8192 }).text).toBe("1,234 tokens · context 12% of 8,192");
    const noWindow = usageLine({ prompt_tokens: 10, completion_tokens: 5, requests: 2 });
    expect(noWindow.text).toBe("15 tokens");
    expect(noWindow.title).toContain("over 2 requests");
  });

  it("shows the usage of the assistant.final under the finished reply, and nothing when none was reported", async () => {
    await actions.newSession();
    const id = store.sessionId;
    actions.onStreamEvent({ sessionId: id, id: "1", type: "assistant.delta", data: { text: "Hi", turn_id: "t1" } });
    expect($("#messages .msg.assistant .msg-usage")).toBeNull();
    const usage = { prompt_tokens: 1000, completion_tokens: 234, requests: 1, context_tokens: 983, context_window: 8192 };
    actions.onStreamEvent({ sessionId: id, id: "2", type: "assistant.final", data: { text: "Hi", turn_id: "t1", usage } });
    expect($("#messages .msg.assistant .msg-usage").textContent).toBe("1,234 tokens · context 12% of 8,192");
    actions.onStreamEvent({ sessionId: id, id: "3", type: "assistant.final", data: { text: "Again", turn_id: "t2" } });
    const replies = document.querySelectorAll("#messages .msg.assistant");
    expect(replies).toHaveLength(2);
    expect(replies[1].querySelector(".msg-usage")).toBeNull();
  });
});
