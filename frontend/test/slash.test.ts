import { describe, expect, it, vi } from "vitest";
import { agentItems, matchSlash, mountSlashMenu } from "../src/slash";
import { mcpPromptItems } from "../src/mcp";
import { Transcript } from "../src/transcript";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });

function composer() {
  document.body.innerHTML = `<form id="composer"><textarea id="input"></textarea></form>`;
  return document.getElementById("input") as HTMLTextAreaElement;
}

async function type(input: HTMLTextAreaElement, text: string, menu: { refresh(): Promise<void> }) {
  input.value = text;
  await menu.refresh();
}

const key = (input: HTMLTextAreaElement, k: string) => {
  const e = new KeyboardEvent("keydown", { key: k, cancelable: true, bubbles: true });
  input.dispatchEvent(e);
  return e;
};

describe("the composer's slash menu", () => {
  it("matches only a first word starting with /", () => {
    const items = agentItems([{ name: "review" }, { name: "init" }]);
    expect(matchSlash(items, "/r").map((i) => i.label)).toEqual(["/review"]);
    expect(matchSlash(items, "/").length).toBe(2);
    expect(matchSlash(items, "/review now")).toEqual([]);
    expect(matchSlash(items, "review")).toEqual([]);
  });

  it("offers the ACP agent's commands from agent.commands; Enter puts the command in the composer and sends nothing", async () => {
    const t = new Transcript();
    t.apply(ev(1, "agent.commands", { commands: [{ name: "review", description: "Review the changes", hint: "what to review" }, { name: "init" }], turn_id: "t1" }));
    const input = composer();
    const menu = mountSlashMenu(input, [() => agentItems(t.commands)], () => {});
    const sent = vi.fn();
    input.addEventListener("keydown", (e) => e.key === "Enter" && sent());
    await type(input, "/re", menu);
    const rows = [...menu.el.querySelectorAll(".slash-item")];
    expect(rows.map((r) => r.getAttribute("data-label"))).toEqual(["/review"]);
    expect(rows[0].textContent).toContain("‹what to review›");
    expect(rows[0].textContent).toContain("Review the changes");
    expect(key(input, "Enter").defaultPrevented).toBe(true);
    expect(input.value).toBe("/review ");
    expect(sent).not.toHaveBeenCalled();
    expect(menu.el.hidden).toBe(true);
    // The menu closed: Enter sends again.
    key(input, "Enter");
    expect(sent).toHaveBeenCalledTimes(1);
  });

  it("offers MCP prompts as /server:prompt, asks for their arguments in a small form, and puts the filled text in the composer", async () => {
    const got: any[] = [];
    (window as any).go = {
      app: {
        MCPPanel: {
          MCPPrompts: async () => [
            { server: "every", name: "args-prompt", title: "Arguments Prompt", description: "two arguments", arguments: [{ name: "city", description: "Name of the city", required: true }, { name: "state" }] },
            { server: "every", name: "simple-prompt", description: "no arguments" },
          ],
          MCPGetPrompt: async (server: string, name: string, args: Record<string, string>) => {
            got.push([server, name, args]);
            return name === "simple-prompt" ? "This is a simple prompt." : `What's weather in ${args.city}?`;
          },
        },
      },
    };
    const errors: string[] = [];
    const input = composer();
    const menu = mountSlashMenu(input, [mcpPromptItems, () => { throw new Error("a broken source"); }], (m) => errors.push(m));
    await type(input, "/every:", menu);
    expect([...menu.el.querySelectorAll(".slash-item")].map((r) => r.getAttribute("data-label"))).toEqual(["/every:args-prompt", "/every:simple-prompt"]);
    expect(menu.el.textContent).toContain("MCP every");

    key(input, "Enter");
    const form = menu.el.querySelector("form.slash-form") as HTMLFormElement;
    expect(form.getAttribute("data-label")).toBe("/every:args-prompt");
    const [city, state] = [...form.querySelectorAll("input")] as HTMLInputElement[];
    expect(city.name).toBe("city");
    expect(city.placeholder).toContain("(required)");
    expect(state.required).toBe(false);
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    expect(errors).toEqual(["Fill in city."]);
    city.value = "Lyon";
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await vi.waitFor(() => expect(input.value).toBe("What's weather in Lyon?"));
    expect(got).toEqual([["every", "args-prompt", { city: "Lyon" }]]);
    expect(menu.el.hidden).toBe(true);

    // A prompt without arguments is filled at once.
    await type(input, "/every:s", menu);
    key(input, "Tab");
    await vi.waitFor(() => expect(input.value).toBe("This is a simple prompt."));
  });
});
