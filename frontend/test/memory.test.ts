// @vitest-environment jsdom
// The Memory view on the window's real markup: how memory finds notes in
// words, the embedding's progress, and the offer of a local server's
// embedding model, against a scripted bound App.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MemoryRetrieval, ProvidersInfo } from "../src/bridge";
import { embeddingOffer, inProgress, mountMemory, progressText, retrievalText } from "../src/memory";
import { flush, loadPage } from "./fakebridge";

const providers = (embeddingModels?: string[]): ProvidersInfo =>
  ({ configured: true, defaultProvider: "openai-compatible", providers: {}, openaiKeyStored: false,
    discovered: [{ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2", "nomic-embed-text"], embeddingModels }] }) as ProvidersInfo;

describe("memory in words", () => {
  it("says how notes are found and how far the embedding is", () => {
    expect(retrievalText({ retrieval: "keyword+synonyms" })).toMatch(/^By their words and common synonyms/);
    const half: MemoryRetrieval = { retrieval: "hybrid", embeddings: { model: "nomic-embed-text", embedded: 1234, total: 2000 } };
    expect(retrievalText(half)).toBe("By meaning and by words, with nomic-embed-text.");
    expect(progressText(half)).toBe("Embedding: 1,234 of 2,000 passages (61%)…");
    expect(inProgress(half)).toBe(true);
    const paused = { ...half, embeddings: { ...half.embeddings!, paused: true } };
    expect(progressText(paused)).toBe("Paused at 1,234 of 2,000 passages (61%).");
    expect(inProgress(paused)).toBe(false);
    expect(progressText({ retrieval: "hybrid", embeddings: { model: "m", embedded: 7, total: 7 } })).toBe("All 7 passages of your notes are embedded.");
  });

  it("offers only a model the server says computes embeddings", () => {
    expect(embeddingOffer(providers(undefined))).toBeUndefined();
    expect(embeddingOffer(providers(["nomic-embed-text"]))).toEqual({ server: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", model: "nomic-embed-text" });
  });
});

describe("the Memory view", () => {
  let state: MemoryRetrieval;
  let calls: string[];
  beforeEach(() => {
    loadPage();
    calls = [];
    state = { retrieval: "keyword+synonyms" };
    (window as any).go = {
      app: {
        App: {
          Providers: async () => providers(["nomic-embed-text"]),
          MemoryStatus: async () => state,
          UseMemoryEmbedding: async (base: string, model: string) => {
            calls.push(`use ${base} ${model}`);
            state = model ? { retrieval: "keyword", embeddings: { model, embedded: 0, total: 40 } } : { retrieval: "keyword+synonyms" };
            return state;
          },
          PauseMemoryEmbedding: async (p: boolean) => {
            calls.push(`pause ${p}`);
            state = { ...state, embeddings: { ...state.embeddings!, paused: p } };
            return state;
          },
        },
      },
    };
  });
  afterEach(() => delete (window as any).go);

  it("offers the found model, uses it, shows progress and pauses", async () => {
    const flashes: string[] = [];
    mountMemory((t) => flashes.push(t));
    const view = document.getElementById("memory-view")!;
    expect(view.hidden).toBe(true);
    document.getElementById("open-memory")!.click();
    await flush();
    await flush();
    expect(view.hidden).toBe(false);
    expect(view.querySelector('[data-memory="retrieval"]')!.textContent).toMatch(/^By their words and common synonyms/);
    const use = view.querySelector<HTMLButtonElement>('[data-action="use-embedding"]')!;
    expect(use.textContent).toBe("Use nomic-embed-text for memory");
    use.click();
    await flush();
    expect(calls).toEqual(["use http://127.0.0.1:11434/v1 nomic-embed-text"]);
    expect(view.querySelector('[data-memory="progress"]')!.textContent).toBe("Embedding: 0 of 40 passages (0%)…");
    expect(flashes.pop()).toBe("Memory now also finds notes by meaning, with nomic-embed-text.");
    view.querySelector<HTMLButtonElement>('[data-action="pause"]')!.click();
    await flush();
    expect(calls.pop()).toBe("pause true");
    expect(view.querySelector('[data-memory="progress"]')!.textContent).toBe("Paused at 0 of 40 passages (0%).");
    expect(view.querySelector('[data-action="resume"]')).not.toBeNull();
    view.querySelector<HTMLButtonElement>('[data-action="off"]')!.click();
    await flush();
    expect(calls.pop()).toBe("use  ");
    expect(view.querySelector('[data-memory="progress"]')).toBeNull();
  });

  it("shows the offer under the setup form when the setup found the model", async () => {
    mountMemory(() => {});
    document.dispatchEvent(new CustomEvent("jarvis:providers", { detail: providers(["nomic-embed-text"]) }));
    await flush();
    await flush();
    expect(document.querySelector('#setup-memory [data-action="use-embedding"]')?.textContent).toBe("Use nomic-embed-text for memory");
  });
});
