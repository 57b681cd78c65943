// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { bytes, changeWord, lineDiff, mountUndo, storageSection, summary, turnBlock, type ChangedTurn, type UndoAPI, type UndoOutcome } from "../src/undo";

const turn = (over: Partial<ChangedTurn> = {}): ChangedTurn => ({
  turn_id: "t_1", time: "2026-11-25T15:00:00Z", tools: ["edit_file"],
  files: [
    { path: "plan.md", before: { kind: "file", mode: 420, size: 5 }, after: { kind: "file", mode: 420, size: 6 } },
    { path: "new.txt", before: { kind: "none" }, after: { kind: "file", mode: 420, size: 1 } },
  ],
  ...over,
});

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("undo block", () => {
  it("says how many files changed and what happened to each", () => {
    expect(summary(turn())).toBe("2 files changed");
    expect(summary(turn({ undone: true, files: turn().files.slice(0, 1) }))).toBe("1 file changed · undone");
    expect(changeWord(turn().files[0])).toBe("changed");
    expect(changeWord(turn().files[1])).toBe("new file");
    expect(changeWord({ path: "x", before: { kind: "file" }, after: { kind: "none" } })).toBe("deleted");
  });

  it("diffs lines", () => {
    expect(lineDiff("a\nb\nc\n", "a\nB\nc\n")).toEqual([
      { op: " ", text: "a" }, { op: "-", text: "b" }, { op: "+", text: "B" }, { op: " ", text: "c" },
    ]);
    expect(lineDiff("", "x")).toEqual([{ op: "+", text: "x" }]);
    // Past the work cap both sides are shown whole.
    expect(lineDiff("a\nb", "c\nd", 1).map((l) => l.op).join("")).toBe("--++");
  });

  it("shows a conflict and asks before overwriting; 'Restore anyway' forces", async () => {
    const calls: [string[] | null, boolean][] = [];
    let refreshed = 0;
    const b = turnBlock(turn(), {
      undo: async (files, force): Promise<UndoOutcome> => {
        calls.push([files, force]);
        if (!force) return { turn_id: "t_1", restored: [], conflict: true, conflicts: [{ path: "plan.md", current: { kind: "file" } }], error: "files were changed since the turn" };
        return { turn_id: "t_1", restored: ["plan.md", "new.txt"], undo_turn_id: "undo-1" };
      },
      diff: async () => ({ path: "plan.md", before: "old\n", after: "new\n", beforeKind: "file", afterKind: "file", beforeSize: 4, afterSize: 4 }),
      changed: () => refreshed++,
    });
    document.body.replaceChildren(b);
    (b.querySelector('[data-undo="turn"]') as HTMLButtonElement).click();
    await tick();
    expect(b.querySelector(".undo-conflict")?.textContent).toContain("plan.md");
    expect(refreshed).toBe(0);
    (b.querySelector('[data-undo="force"]') as HTMLButtonElement).click();
    await tick();
    expect(calls).toEqual([[null, false], [null, true]]);
    expect(b.querySelector(".undo-status")?.textContent).toBe("Restored 2 files.");
    expect(refreshed).toBe(1);
  });

  it("restores one file and shows its diff as text", async () => {
    const calls: (string[] | null)[] = [];
    const b = turnBlock(turn(), {
      undo: async (files) => { calls.push(files); return { turn_id: "t_1", restored: files ?? [] }; },
      diff: async (path) => ({ path, before: "<b>old</b>\n", after: "new\n", beforeKind: "file", afterKind: "file", beforeSize: 9, afterSize: 4 }),
      changed: () => {},
    });
    document.body.replaceChildren(b);
    const li = b.querySelector('li[data-path="plan.md"]')!;
    (li.querySelector('[data-undo="diff"]') as HTMLButtonElement).click();
    await tick();
    expect(li.querySelector("pre.undo-diff")?.textContent).toBe("- <b>old</b>\n+ new\n");
    expect(li.querySelector("b")).toBeNull();
    (li.querySelector('[data-undo="file"]') as HTMLButtonElement).click();
    await tick();
    expect(calls).toEqual([["plan.md"]]);
  });

  it("mounts after the last message of each changed turn and survives a re-render", async () => {
    const box = document.createElement("div");
    document.body.replaceChildren(box);
    const msg = (turnId: string, text: string) => {
      const el = document.createElement("div");
      el.textContent = text;
      el.dataset.turn = turnId;
      return el;
    };
    const render = () => box.replaceChildren(msg("t_1", "ask"), msg("t_1", "reply"), msg("t_2", "next"));
    render();
    let undone = false;
    const api: UndoAPI = {
      UndoStorage: async () => { throw new Error("unused"); },
      ChangedTurns: async () => [turn({ undone })],
      UndoTurn: async () => ({ turn_id: "t_1", restored: [] }),
      TurnFileDiff: async () => { throw new Error("unused"); },
    };
    const undo = mountUndo({ box, sessionId: () => "s1", api: () => api });
    await tick();
    const order = () => Array.from(box.children).map((e) => (e as HTMLElement).dataset.changesTurn ? "block" : e.textContent);
    expect(order()).toEqual(["ask", "reply", "block", "next"]);
    render(); // the transcript re-renders its window
    await tick();
    expect(order()).toEqual(["ask", "reply", "block", "next"]);
    // A refresh with the same data keeps the block (and what it shows).
    const block = box.querySelector(".turn-changes");
    await undo.refresh();
    expect(box.querySelector(".turn-changes")).toBe(block);
    // The turn undone: its block is made anew and says so.
    undone = true;
    await undo.refresh();
    expect(box.querySelector(".turn-changes")).not.toBe(block);
    expect(box.querySelector(".turn-changes strong")?.textContent).toBe("2 files changed · undone");
  });

  it("shows the caps and what is kept in the settings", () => {
    expect(bytes(1 << 30)).toBe("1 GiB");
    expect(bytes(1536 << 10)).toBe("1.5 MiB");
    const el = storageSection({ maxBytes: 1 << 30, maxAgeDays: 30, checkpoints: 3, usedBytes: 2048, trashBytes: 0, checkpointDir: "/d/checkpoints", trashDir: "/d/trash" });
    expect(el.textContent).toContain("3 checkpoints, 2.0 KiB of 1 GiB");
    expect(el.textContent).toContain("older than 30 days");
    expect(el.textContent).toContain("cannot be undone");
  });
});

describe("a file written into a new folder", () => {
  // What ChangedTurns gives for write_file of plans/lake/list.md when plans/ did not exist.
  const created: ChangedTurn = {
    turn_id: "t_2", time: "2026-11-25T15:00:00Z", tools: ["write_file"],
    files: [{ path: "plans", before: { kind: "none" }, after: { kind: "dir", mode: 493, children: [{ name: "lake", state: { kind: "dir", mode: 493, children: [{ name: "list.md", state: { kind: "file", mode: 420, size: 11 } }] } }] } }],
  };

  it("is listed by name with a new-file preview, the folder beside it without an empty diff", async () => {
    const asked: string[] = [];
    const block = turnBlock(created, {
      undo: async () => ({ turn_id: "t_2", restored: [] }),
      diff: async (path) => {
        asked.push(path);
        return { path, before: "", after: "tent\nstove\n", beforeKind: "none", afterKind: "file", beforeSize: 0, afterSize: 11 };
      },
      changed: () => {},
    });
    const rows = Array.from(block.querySelectorAll<HTMLElement>(".undo-files > li"));
    expect(rows.map((r) => r.querySelector("code")!.textContent)).toEqual(["plans/lake/list.md", "plans/"]);
    expect(rows[0].querySelector(".hint")!.textContent).toBe("new file (in the new folder plans/)");
    expect(rows[1].querySelector(".hint")!.textContent).toBe("new folder");
    expect(rows[1].querySelector<HTMLElement>('[data-undo="diff"]')!.hidden).toBe(true);
    rows[0].querySelector<HTMLElement>('[data-undo="diff"]')!.click();
    await tick();
    expect(asked).toEqual(["plans/lake/list.md"]);
    const preview = rows[0].querySelector(".undo-diff.new-file")!;
    expect(preview.textContent).toBe("New file · 11 bytes\ntent\nstove\n");
  });
});
