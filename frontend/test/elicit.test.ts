import { describe, expect, it } from "vitest";
import { renderElicit, type Elicitation } from "../src/elicit";

const form: Elicitation = {
  id: "elicit-1",
  server: "every",
  mode: "form",
  message: "Please provide inputs for the following fields:",
  schema: {
    properties: {
      name: { type: "string", title: "String", description: "Your full, legal name" },
      check: { type: "boolean", title: "Boolean" },
      email: { type: "string", format: "email", title: "Email" },
      integer: { type: "integer", title: "Integer", minimum: 1, maximum: 100, default: 42 },
      hero: { type: "string", title: "Hero", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Green Lantern" }], default: "hero-1" },
      pet: { type: "string", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] },
      fish: { type: "array", title: "Fish", items: { anyOf: [{ const: "fish-1", title: "Tuna" }, { const: "fish-2", title: "Salmon" }] }, default: ["fish-1"] },
    },
    required: ["name"],
  },
};

describe("elicitation dialog", () => {
  it("shows the server and typed fields from the schema, and sends what was typed", () => {
    const got: unknown[] = [];
    const el = renderElicit(form, (a, c) => got.push([a, c]));
    expect(el.textContent).toContain("every asks you");
    expect(el.textContent).toContain("Please provide inputs");
    const q = (n: string) => el.querySelector(`[data-elicit-field="${n}"]`) as HTMLInputElement;
    expect(q("email").type).toBe("email");
    expect(q("integer").type).toBe("number");
    expect(q("integer").step).toBe("1");
    expect(q("integer").value).toBe("42");
    expect(q("check").type).toBe("checkbox");
    expect((q("hero") as unknown as HTMLSelectElement).value).toBe("hero-1");
    expect(el.querySelector('[data-elicit-field="pet"]')!.textContent).toContain("Dogs");
    // Required left empty: not sent, said in words.
    (el.querySelector('[data-elicit="accept"]') as HTMLButtonElement).click();
    expect(got).toEqual([]);
    expect(el.querySelector('[data-elicit="error"]')!.textContent).toBe("Fill in: String");
    q("name").value = "Ada";
    q("check").checked = true;
    (el.querySelector('[data-elicit="accept"]') as HTMLButtonElement).click();
    expect(got).toEqual([["accept", { name: "Ada", check: true, integer: 42, hero: "hero-1", fish: ["fish-1"] }]]);
  });
  it("declines by default: Decline has the first place, and Escape declines; one answer only", () => {
    const got: unknown[] = [];
    const el = renderElicit(form, (a) => got.push(a));
    const buttons = el.querySelectorAll(".prompt-buttons button");
    expect(buttons[0].getAttribute("data-elicit")).toBe("decline");
    el.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    (el.querySelector('[data-elicit="accept"]') as HTMLButtonElement).click();
    expect(got).toEqual(["decline"]);
  });
  it("shows a URL and opens it only on the user's click", () => {
    const opened: string[] = [];
    (window as unknown as { runtime: unknown }).runtime = { EventsOn() {}, BrowserOpenURL: (u: string) => opened.push(u) };
    const got: unknown[] = [];
    const el = renderElicit({ id: "e2", server: "pay", mode: "url", message: "Authorize the payment", url: "https://pay.example/authorize?x=1" }, (a) => got.push(a));
    expect(el.querySelector('[data-elicit="url"]')!.textContent).toBe("https://pay.example/authorize?x=1");
    expect(opened).toEqual([]);
    (el.querySelector('[data-elicit="open"]') as HTMLButtonElement).click();
    expect(opened).toEqual(["https://pay.example/authorize?x=1"]);
    expect(got).toEqual(["accept"]);
  });
});
