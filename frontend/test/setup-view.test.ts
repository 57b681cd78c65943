// @vitest-environment jsdom
// The setup panel's Test connection: it sends what the form holds, says in
// words what the service found, saves nothing, and keeps the key typed in.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { mountSetup } from "../src/views/setup";
import { fakeBridge, flush, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

let fb: FakeBridge;
const $ = <T extends HTMLElement = HTMLElement>(s: string) => document.querySelector(s) as T;

beforeEach(() => {
  loadPage();
  fb = fakeBridge();
  mountSetup(new Actions(new Store(), bridgeOf(fb)), () => {});
  $("#open-setup").click();
});

describe("Test connection", () => {
  it("reports a found model, a missing one and a server that does not answer, and saves nothing", async () => {
    const out = $("#setup-test-result");
    expect(out.hidden).toBe(true);
    $<HTMLInputElement>("#setup-baseurl").value = "http://127.0.0.1:11434/v1";
    $<HTMLInputElement>("#setup-model").value = "llama3";
    const test = $<HTMLButtonElement>('#setup-compatible [data-action="test-connection"]');
    test.click();
    expect(out.textContent).toBe("Testing…");
    expect(test.disabled).toBe(true);
    await flush();
    expect(out.textContent).toBe("Reached Ollama at http://127.0.0.1:11434/v1: model llama3 found.");
    expect(out.className).toBe("setup-test-result good");
    expect(test.disabled).toBe(false);
    $<HTMLInputElement>("#setup-model").value = "mistral";
    test.click();
    await flush();
    expect(out.textContent).toContain('has no model "mistral". It has llama3.');
    expect(out.className).toBe("setup-test-result warn");
    $<HTMLInputElement>("#setup-baseurl").value = "http://127.0.0.1:9/v1";
    test.click();
    await flush();
    expect(out.textContent).toBe("No server answers at http://127.0.0.1:9/v1. Is it running?");
    expect(fb.calls.filter((c) => c.method === "TestProvider").map((c) => c.args[0])).toEqual([
      { provider: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1", model: "llama3" },
      { provider: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1", model: "mistral" },
      { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "mistral" },
    ]);
    expect(fb.calls.some((c) => c.method === "SetProvider")).toBe(false);
  });

  it("tests the OpenAI form with the key typed in, keeps the key, and shows a failed check as words", async () => {
    $<HTMLButtonElement>('[data-tab="openai"]').click();
    $<HTMLInputElement>("#setup-apikey").value = "sk-test";
    fb.failNext("TestProvider", "the service is not running");
    $<HTMLButtonElement>('#setup-openai [data-action="test-connection"]').click();
    await flush();
    expect(fb.calls.find((c) => c.method === "TestProvider")!.args[0]).toEqual({ provider: "openai", apiKey: "sk-test", model: "" });
    expect($("#setup-test-result").textContent).toBe("the service is not running");
    expect($<HTMLInputElement>("#setup-apikey").value).toBe("sk-test");
  });
});
