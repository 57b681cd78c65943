// @vitest-environment jsdom
// The permission prompt cannot be approved by accident: Enter on a risky or
// destructive prompt denies; "always allow" shows the rule it will save,
// scoped to the call's target, and saves the scope the user picked.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { riskWord, type Prompt } from "../src/prompt";
import { Store } from "../src/store";
import { mountPrompt } from "../src/views/prompt";
import { fakeBridge, flush, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

let fb: FakeBridge;
let actions: Actions;
const $ = (s: string) => document.querySelector(s) as HTMLElement;

const prompt = (over: Partial<Prompt> = {}): Prompt => ({
  id: "p1", tool_call_id: "t1", tool: "write_file", arguments: { path: "notes/todo.txt", content: "milk\neggs" },
  decisive: [{ name: "path", value: "notes/todo.txt" }], risk: "risky", reason: "write_file is risky",
  choices: ["once", "session", "always", "deny"], deadline: new Date(Date.now() + 60000).toISOString(),
  scopes: [
    { label: "only the file notes/todo.txt", rule: { tool: "write_file", args: { path: "notes/todo.txt" }, action: "allow" } },
    { label: "any file in the folder notes and its subfolders", rule: { tool: "write_file", args: { path: "notes/*" }, action: "allow" } },
    { label: "any file anywhere in the workspace", rule: { tool: "write_file", action: "allow" } },
  ],
  ...over,
});

function enter(): void {
  (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
}

beforeEach(() => {
  loadPage();
  fb = fakeBridge();
  actions = new Actions(new Store(), bridgeOf(fb));
  mountPrompt(actions);
});

describe("permission prompt view", () => {
  it("denies on Enter for a risky call: focus starts on Deny", async () => {
    actions.onPrompts([prompt()]);
    expect((document.activeElement as HTMLElement).dataset.choice).toBe("deny");
    expect($('#prompt button[data-choice="once"]').classList.contains("primary")).toBe(false);
    enter();
    await flush();
    const answers = fb.calls.filter((c) => c.method === "AnswerPrompt");
    expect(answers).toHaveLength(1);
    expect(answers[0].args[0]).toBe("p1");
    expect((answers[0].args[1] as any).choice).toBe("deny");
  });

  it("denies on Enter for a destructive call", async () => {
    actions.onPrompts([prompt({ tool: "run_command", destructive: true, choices: ["once", "deny"], scopes: undefined })]);
    enter();
    await flush();
    expect((fb.calls.find((c) => c.method === "AnswerPrompt")?.args[1] as any).choice).toBe("deny");
  });

  it("does not approve on Enter in the arguments box", async () => {
    actions.onPrompts([prompt()]);
    ($("#prompt-args") as HTMLTextAreaElement).focus();
    enter();
    await flush();
    expect(fb.calls.some((c) => c.method === "AnswerPrompt")).toBe(false);
  });

  it("shows the rule Always allow will save, narrowest first, and saves the scope picked on purpose", async () => {
    actions.onPrompts([prompt()]);
    const sel = $("#prompt-scope select") as HTMLSelectElement;
    expect($("#prompt-scope").hidden).toBe(false);
    expect(sel.options[sel.selectedIndex].textContent).toBe("only the file notes/todo.txt");
    sel.value = "1";
    sel.dispatchEvent(new Event("change"));
    ($('#prompt button[data-choice="always"]') as HTMLButtonElement).click();
    await flush();
    expect(fb.calls.at(-1)).toEqual({ method: "AnswerPrompt", args: ["p1", { choice: "always", edited_arguments: "", scope: 1, why: "", chat: "" }] });
  });

  it("shows what a file write will write as text, with the workspace path in full", async () => {
    actions.store.workspace = "/home/ada/Jarvis";
    actions.onPrompts([prompt()]);
    expect($("#prompt-title").textContent).toBe("Write the file notes/todo.txt?");
    expect($("#prompt-where").textContent).toContain("/home/ada/Jarvis/notes/todo.txt");
    expect($("#prompt-preview pre").textContent).toBe("milk\neggs");
    expect($("#prompt-meta .badge").textContent).toBe("risky");
  });
});

describe("permissions page", () => {
  it("lists every rule in plain words, revokes one and edits another", async () => {
    const { mountPermissions } = await import("../src/views/permissions");
    fb.rules = [
      { tool: "write_file", args: { path: "notes/todo.txt" }, action: "allow" },
      { tool: "run_command", args: { program: "rm" }, action: "deny" },
    ];
    mountPermissions(actions);
    $("#open-permissions").click();
    await flush();
    await flush();
    expect($("#permissions").hidden).toBe(false);
    expect($("#permissions-workspace").textContent).toContain("/home/ada/Jarvis");
    const texts = () => Array.from(document.querySelectorAll(".permission-row .permission-text")).map((x) => x.textContent);
    expect(texts()).toEqual(["Allow write_file when path notes/todo.txt", "Never allow run_command when program rm"]);
    ($('.permission-row[data-index="0"] [data-action="revoke"]') as HTMLButtonElement).click();
    await flush();
    await flush();
    expect(texts()).toEqual(["Never allow run_command when program rm"]);
    ($('.permission-row[data-index="0"] [data-action="edit"]') as HTMLButtonElement).click();
    const form = $(".permission-edit") as HTMLFormElement;
    (form.querySelector("select") as HTMLSelectElement).value = "ask";
    (form.querySelector("textarea") as HTMLTextAreaElement).value = "program = rm\nargs = -rf *";
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    await flush();
    expect(fb.rules).toEqual([{ tool: "run_command", args: { program: "rm", args: "-rf *" }, action: "ask" }]);
    expect(texts()).toEqual(["Always ask for run_command when program rm and args -rf *"]);
  });

  it("adds a command rule, lists the no-prompt commands and the sandbox's protections", async () => {
    const { mountPermissions } = await import("../src/views/permissions");
    fb.rules = [];
    mountPermissions(actions);
    $("#open-permissions").click();
    await flush();
    await flush();
    expect($("#permissions-defaults").textContent).toContain("ls *, git status *");
    const items = Array.from(document.querySelectorAll("#permissions-sandbox li")).map((x) => [x.className, x.textContent]);
    expect(items).toEqual([
      ["held", "✓ writes only in its folders — bubblewrap and Landlock ABI 7"],
      ["missing", "✗ missing: Jarvis's own folders out of reach — needs bubblewrap, missing here"],
    ]);
    const form = $("#permissions-add") as HTMLFormElement;
    (form.querySelector('input[aria-label="Command"]') as HTMLInputElement).value = "npm run *";
    (form.querySelector('input[aria-label="With network"]') as HTMLInputElement).checked = true;
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    await flush();
    expect(fb.rules).toEqual([{ tool: "run_command", command: "npm run *", action: "allow", network: true, workspace: "/home/ada/Jarvis", origin: { kind: "page", at: "2026-11-29T00:30:00Z" } }]);
    const texts = Array.from(document.querySelectorAll(".permission-row .permission-text")).map((x) => x.textContent);
    expect(texts).toEqual(["Allow the command npm run *, with network in /home/ada/Jarvis"]);
  });
});

describe("tool card", () => {
  it("says how a command ran: exit code, duration, sandbox and network", async () => {
    const { toolCard } = await import("../src/views/conversation");
    const result = JSON.stringify({ exit_code: 0, stdout: "On branch main\n", sandbox: "sandboxed (bubblewrap, Landlock ABI 7, seccomp), no network", network: false, duration_ms: 42 });
    const card = toolCard({ key: "tool-1", kind: "tool", text: "", tool: { id: "1", name: "run_command", arguments: { program: "git", args: ["status"] }, pending: false, decision: "allowed", decidedBy: "policy", ok: true, result } });
    expect(card.querySelector(".command-run")!.textContent).toBe("exit 0 · 42 ms · sandboxed (bubblewrap, Landlock ABI 7, seccomp), no network");
    const stopped = JSON.stringify({ exit_code: -1, stdout: "", sandbox: "not sandboxed: it can do whatever you can, network included", network: false, duration_ms: 30000, stopped: "timed out after 30s" });
    const card2 = toolCard({ key: "tool-2", kind: "tool", text: "", tool: { id: "2", name: "run_command", arguments: { program: "sleep" }, pending: false, decision: "allowed", decidedBy: "user", ok: true, result: stopped } });
    expect(card2.querySelector(".command-run")!.textContent).toBe("stopped: timed out after 30s · 30000 ms · not sandboxed: it can do whatever you can, network included");
  });
});

describe("an overwrite shows what changes", () => {
  it("shows the line diff of the existing file instead of the whole content, with − and + marks", () => {
    actions.onPrompts([prompt({
      diff: {
        added: 1, removed: 1,
        lines: [{ op: "…", text: "4 unchanged lines" }, { op: " ", text: "milk" }, { op: "-", text: "bread" }, { op: "+", text: "eggs" }],
      },
    })]);
    const box = $("#prompt-preview");
    expect(box.hidden).toBe(false);
    expect(box.querySelector(".label")!.textContent).toBe("It will change the existing file: 1 line removed (−), 1 line added (+).");
    const lines = Array.from(box.querySelectorAll(".prompt-diff span")).map((x) => [x.className, x.textContent]);
    expect(lines).toEqual([["diff-skip", "⋯ 4 unchanged lines\n"], ["diff-same", "  milk\n"], ["diff-del", "− bread\n"], ["diff-add", "+ eggs\n"]]);
    // The JSON stays one click away.
    expect(($("#prompt-args-box") as HTMLDetailsElement).open).toBe(false);
  });

  it("says when the diff is cut, and shows the note and the new content for a binary or huge file", () => {
    actions.onPrompts([prompt({ diff: { added: 900, removed: 900, truncated: true, lines: [{ op: "-", text: "a0" }, { op: "+", text: "b0" }] } })]);
    expect($("#prompt-preview").textContent).toContain("the diff goes on");
    actions.onPrompts([]);
    actions.onPrompts([prompt({ id: "p2", diff: { added: 0, removed: 0, note: "The file exists and is binary (7 bytes): it would be replaced whole." } })]);
    expect($("#prompt-preview .label").textContent).toBe("The file exists and is binary (7 bytes): it would be replaced whole. It will write exactly this:");
    expect($("#prompt-preview pre").textContent).toBe("milk\neggs");
  });

  it("shows the content of a new file (no diff)", () => {
    actions.onPrompts([prompt()]);
    expect($("#prompt-preview .label").textContent).toBe("It will write exactly this (replacing the file if it exists):");
    expect($("#prompt-preview .prompt-diff")).toBeNull();
  });
});

describe("the prompt in plain words", () => {
  it("has the focus ring on Deny from the first frame: focused as it shows, and styled on :focus, not only :focus-visible", () => {
    actions.onPrompts([prompt()]);
    const deny = $('#prompt button[data-choice="deny"]');
    expect($("#prompt").hidden).toBe(false);
    expect(document.activeElement).toBe(deny);
    // WebKit shows :focus-visible after a key press only; a focus given by
    // the code must be visible too.
    const css = readFileSync(resolve(__dirname, "../src/style.css"), "utf8");
    expect(css).toMatch(/#prompt \.prompt-buttons button:focus \{[^}]*outline: 3px solid/);
  });

  it("shows no developer text: no schema description, no 'is risky', no JSON of what the agent wrote", () => {
    actions.onPrompts([prompt({
      description: "Write a UTF-8 text file inside the workspace; parameters: path (string), content (string).",
      reason: "write_file is risky",
      requested: { path: "./notes//todo.txt", content: "milk\neggs" },
    })]);
    const text = $("#prompt").textContent!;
    expect(text).not.toContain("UTF-8 text file inside the workspace");
    expect(text).not.toContain("is risky");
    expect(text).not.toContain("The agent wrote {");
    expect($("#prompt-requested").textContent).toBe("The agent asked for path “./notes//todo.txt”; this is the same call in the form that will run.");
    expect($("#prompt-desc").textContent).toBe("Jarvis will create notes/todo.txt with 2 lines of text; if the file exists, it is replaced.");
  });

  it("says what a command will do from its arguments", () => {
    actions.onPrompts([prompt({ tool: "run_command", arguments: { program: "git", args: ["push", "origin"], cwd: "repo", network: true }, scopes: undefined })]);
    expect($("#prompt-desc").textContent).toBe("Jarvis will run git push origin in repo, with access to the network.");
  });

  it("names an MCP tool as people would: the server's title › the tool's title", () => {
    actions.onPrompts([prompt({ tool: "mcp__every__echo", title: "Everything › Echo", arguments: { message: "hi" }, decisive: [], scopes: undefined })]);
    expect($("#prompt-title").textContent).toBe("Use Everything › Echo?");
    expect($("#prompt-desc").textContent).toBe("The agent asks the Everything server to run Echo with message “hi”.");
    expect($("#prompt").textContent).not.toContain("mcp__");
    actions.onPrompts([]);
    // Without a title (an older desktop), the name in words.
    actions.onPrompts([prompt({ id: "p2", tool: "mcp__weather__get_forecast", arguments: { city: "Oslo" }, decisive: [], scopes: undefined })]);
    expect($("#prompt-title").textContent).toBe("Use Weather › Get forecast?");
  });

  it("says the asking rule's note and a delete in words", () => {
    actions.onPrompts([prompt({ tool: "read_file", arguments: { path: ".ssh/id_ed25519" }, note: "this file holds credentials", reason: "this file holds credentials; read_file is safe; policy rule: ask read_file", scopes: undefined })]);
    expect($("#prompt-reason").textContent).toBe("This file holds credentials.");
  });

  it("shows the same risk word as the tool card", async () => {
    const { toolCard } = await import("../src/views/conversation");
    for (const risk of ["safe", "risky"]) {
      actions.onPrompts([]);
      actions.onPrompts([prompt({ id: `p-${risk}`, risk })]);
      const card = toolCard({ key: "k", kind: "tool", text: "", tool: { id: "t1", name: "write_file", arguments: {}, risk: "safe", class: risk, pending: false, decision: "denied", decidedBy: "user" } });
      const onCard = card.querySelectorAll(".badge[data-risk]");
      expect(onCard).toHaveLength(1);
      expect(onCard[0].textContent).toBe($("#prompt-meta .badge").textContent);
      expect(onCard[0].textContent).toBe(riskWord(risk));
    }
  });

  it("sends the reason typed in “Tell the agent why” with Deny, and the chat's title with Always allow", async () => {
    actions.store.sessions = [{ sessionId: "s1", agentId: "general", name: "Pack for the lake trip" }];
    actions.onPrompts([prompt({ session_id: "s1" })]);
    const why = $("#prompt-why") as HTMLInputElement;
    expect(why.value).toBe("");
    why.value = "not that file; use notes-new.txt";
    why.focus();
    why.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    await flush();
    expect(fb.calls.at(-1)).toEqual({ method: "AnswerPrompt", args: ["p1", { choice: "deny", edited_arguments: "", scope: 0, why: "not that file; use notes-new.txt", chat: "" }] });
    actions.onPrompts([]);
    actions.onPrompts([prompt({ id: "p2", session_id: "s1" })]);
    expect(($("#prompt-why") as HTMLInputElement).value).toBe("");
    ($('#prompt button[data-choice="always"]') as HTMLButtonElement).click();
    await flush();
    expect(fb.calls.at(-1)).toEqual({ method: "AnswerPrompt", args: ["p2", { choice: "always", edited_arguments: "", scope: 0, why: "", chat: "Pack for the lake trip" }] });
  });
});
