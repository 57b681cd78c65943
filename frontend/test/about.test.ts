import { describe, expect, it } from "vitest";
import { firstRunIntro, keyStorageNote } from "../src/about";
import type { ProvidersInfo } from "../src/bridge";

const base: ProvidersInfo = { configured: false, defaultProvider: "", providers: {}, openaiKeyStored: false, discovered: [] };

describe("first-run texts", () => {
  it("offers a discovered local server by name", () => {
    const t = firstRunIntro({ ...base, discovered: [{ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2"] }] });
    expect(t).toMatch(/needs a language model/);
    expect(t).toMatch(/Ollama is running on this computer/);
  });
  it("asks for an API key when nothing runs locally", () => {
    const t = firstRunIntro(base);
    expect(t).toMatch(/No model server is running on this computer/);
    expect(t).toMatch(/OpenAI API key/);
  });
  it("warns when the key is in the less protected file", () => {
    const n = keyStorageNote({ ...base, openaiKeyStored: true, keyStorage: "file", secretsFile: "/home/u/.config/jarvis/secrets.json" });
    expect(n.warn).toBe(true);
    expect(n.text).toContain("/home/u/.config/jarvis/secrets.json");
    expect(n.text).toMatch(/less protected than a keyring/);
    expect(keyStorageNote({ ...base, openaiKeyStored: true, keyStorage: "keyring" }).warn).toBe(false);
    expect(keyStorageNote({ ...base, openaiKeyStored: true, keyStorage: "env" }).text).toMatch(/JARVIS_SECRET_OPENAI/);
  });
});
