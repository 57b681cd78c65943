import { describe, expect, it } from "vitest";
import { argumentsText, contentPreview, decisiveList, promptSentence, promptTitle, requestedLine, ruleText, workspacePath, type Prompt } from "../src/prompt";

const prompt = (over: Partial<Prompt> = {}): Prompt => ({
  id: "prompt_1", tool_call_id: "tc_1", tool: "run_command", risk: "risky", reason: "run_command is risky",
  choices: ["once", "deny"], deadline: new Date(Date.now() + 60000).toISOString(), arguments: {}, ...over,
});

describe("permission prompt", () => {
  it("shows the decisive argument first and in full, however long the others are", () => {
    const long = "x".repeat(5000);
    const p = prompt({
      decisive: [{ name: "command", value: `rm -rf ${long} build` }, { name: "folder", value: "." }],
      arguments: { args: ["-rf", long, "build"], cwd: ".", program: "rm", zzz_note: "y".repeat(9000) },
    });
    const dl = decisiveList(p);
    const names = Array.from(dl.querySelectorAll("dt")).map((x) => x.textContent);
    const values = Array.from(dl.querySelectorAll("dd")).map((x) => x.textContent);
    expect(names).toEqual(["command", "folder"]);
    expect(values[0]).toBe(`rm -rf ${long} build`);
    const text = argumentsText(p);
    expect(text.indexOf('"program"')).toBeLessThan(text.indexOf('"zzz_note"'));
    expect(text.indexOf('"program"')).toBeLessThan(text.indexOf('"args"'));
    expect(text).toContain(long);
  });

  it("renders values as text, never markup", () => {
    const dl = decisiveList(prompt({ decisive: [{ name: "path", value: `<img src=x onerror="window.__pwned=1">` }] }));
    expect(dl.querySelector("img")).toBeNull();
    expect(dl.textContent).toContain("<img src=x");
  });

  it("names the model's spelling when the gate rewrote it", () => {
    expect(requestedLine(prompt())).toBe("");
    const line = requestedLine(prompt({ requested: { path: "./config//.env" }, arguments: { path: "config/.env" } }));
    expect(line).toContain("./config//.env");
    expect(line).toContain("the form that will run");
  });

  it("asks to schedule a task in words: its name, that it runs on its own, where its results go", () => {
    const p = prompt({ tool: "schedule_task", arguments: { name: "Daily note", prompt: "Summarise yesterday's notes into today's note.", schedule: "every weekday at 8:00", time_zone: "Europe/Berlin", tools: ["read_file", "write_file"] } });
    expect(promptTitle(p)).toBe("Schedule the task \u201cDaily note\u201d?");
    expect(promptSentence(p)).toBe("Jarvis will run this task on its schedule below, also while you are away, with only the tools named; calls your policy asks about wait for you, and its results come to your Inbox.");
    expect(promptTitle(p) + promptSentence(p)).not.toMatch(/schedule_task|Schedule task|time zone|\{/);
  });

  it("says in plain words what the file tools that change files will do", () => {
    const edit = prompt({ tool: "edit_file", arguments: { path: "notes/a.md", old_string: "one\ntwo", new_string: "three" } });
    expect(promptTitle(edit)).toBe("Edit the file notes/a.md?");
    expect(workspacePath(edit, "/home/u/ws/")).toBe("/home/u/ws/notes/a.md");
    expect(contentPreview(edit)?.text).toBe("- one\n- two\n+ three");
    expect(promptTitle(prompt({ tool: "move_path", arguments: { from: "a.txt", to: "b.txt", overwrite: true } }))).toBe("Move a.txt to b.txt, replacing what is there?");
    expect(promptTitle(prompt({ tool: "delete_path", arguments: { path: "old" } }))).toBe("Delete old (to Jarvis's trash)?");
    expect(promptTitle(prompt({ tool: "make_dir", arguments: { path: "new" } }))).toBe("Create the folder new?");
    const sampling = prompt({ tool: "mcp_sampling", arguments: { server: "every", model: "llama3.2", messages: [{ role: "user", text: "name a colour" }] } });
    expect(promptTitle(sampling)).toBe("Let the MCP server every use your model llama3.2?");
    expect(promptSentence(sampling)).toBe("The server every asks for a completion: llama3.2 will read the message below, and its answer goes back to the server (counted in this conversation's usage).");
  });
});

describe("a default credential-store rule", () => {
  it("says in plain words that the file holds credentials", () => {
    expect(ruleText({ tool: "*", args: { path: "*.ssh/*" }, action: "ask", note: "this file holds credentials" })).toBe(
      "Always ask for every tool when path *.ssh/* — this file holds credentials",
    );
  });
});
