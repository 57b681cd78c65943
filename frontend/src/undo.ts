// "N files changed" under each turn that changed files, with the list, a
// diff view per file, "Undo these changes" and a per-file restore. A file
// changed since the turn is a conflict: it is shown and the user is asked
// before anything is overwritten. The data and the undo come from the Go
// side (app/undo.go: ChangedTurns, TurnFileDiff, UndoTurn).
//
// mountUndo attaches itself to the transcript's message box: message
// elements carry data-turn (their turn id), and a block is kept after the
// last element of each turn that changed files, even when the box is
// re-rendered.
import { errText, on } from "./bridge";
import { h } from "./view";

export interface FileState {
  kind: "none" | "file" | "dir" | "symlink";
  mode?: number;
  size?: number;
  target?: string;
  /** A folder's entries, sorted by name. */
  children?: { name: string; state: FileState }[];
}

/** The files in a folder's state, as paths under dir ("plans/lake/list.md"). */
export function filesIn(dir: string, st: FileState): string[] {
  const out: string[] = [];
  for (const c of st.children ?? []) {
    const p = `${dir}/${c.name}`;
    if (c.state.kind === "dir") out.push(...filesIn(p, c.state));
    else out.push(p);
  }
  return out;
}

export interface ChangedFile {
  path: string;
  before: FileState;
  after: FileState;
}

export interface ChangedTurn {
  turn_id: string;
  session_id?: string;
  time: string;
  tools: string[];
  files: ChangedFile[];
  undone?: boolean;
}

export interface Conflict {
  path: string;
  current: FileState;
}

export interface UndoOutcome {
  turn_id: string;
  undo_turn_id?: string;
  restored: string[];
  conflicts?: Conflict[];
  conflict?: boolean;
  error?: string;
}

export interface FileDiff {
  path: string;
  before: string;
  after: string;
  binary?: boolean;
  gone?: boolean;
  beforeKind: string;
  afterKind: string;
  beforeSize: number;
  afterSize: number;
}

export interface UndoStorage {
  maxBytes: number;
  maxAgeDays: number;
  checkpoints: number;
  usedBytes: number;
  trashBytes: number;
  checkpointDir: string;
  trashDir: string;
}

export interface UndoAPI {
  UndoStorage(): Promise<UndoStorage>;
  ChangedTurns(sessionId: string): Promise<ChangedTurn[]>;
  UndoTurn(turnId: string, files: string[] | null, force: boolean): Promise<UndoOutcome>;
  TurnFileDiff(turnId: string, path: string): Promise<FileDiff>;
}

/** What happened to a file, in a word. */
export function changeWord(f: ChangedFile): string {
  if (f.before.kind === "none") return f.after.kind === "file" ? "new file" : f.after.kind === "dir" ? "new folder" : "created";
  if (f.after.kind === "none") return "deleted";
  if (f.before.kind !== f.after.kind) return `${f.before.kind} → ${f.after.kind}`;
  if (f.before.mode !== f.after.mode && f.before.size === f.after.size) return "mode changed";
  return "changed";
}

export function summary(t: ChangedTurn): string {
  const n = t.files.length;
  return `${n} file${n === 1 ? "" : "s"} changed` + (t.undone ? " · undone" : "");
}

export type DiffLine = { op: " " | "-" | "+"; text: string };

/** A line diff (longest common subsequence); past maxCells of work the
 *  two sides are shown whole, old then new. */
export function lineDiff(before: string, after: string, maxCells = 4_000_000): DiffLine[] {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const b = after === "" ? [] : after.replace(/\n$/, "").split("\n");
  if (a.length * b.length > maxCells) {
    return [...a.map((text) => ({ op: "-" as const, text })), ...b.map((text) => ({ op: "+" as const, text }))];
  }
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out: DiffLine[] = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push({ op: " ", text: a[i] }); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push({ op: "-", text: a[i++] });
    else out.push({ op: "+", text: b[j++] });
  }
  while (i < n) out.push({ op: "-", text: a[i++] });
  while (j < m) out.push({ op: "+", text: b[j++] });
  return out;
}

export function diffView(d: FileDiff): HTMLElement {
  if (d.gone) {
    return h("div", { class: "undo-diff binary" }, "The file has changed again since; this turn's version is no longer kept, so there is no diff to show.");
  }
  if (d.binary) {
    return h("div", { class: "undo-diff binary" },
      `Binary or large file: ${d.beforeKind === "none" ? "did not exist" : d.beforeSize + " bytes"} → ${d.afterKind === "none" ? "deleted" : d.afterSize + " bytes"}.`);
  }
  if (d.beforeKind === "none" && d.afterKind === "file") {
    // A new file: its content, as it was written (a preview, not a diff).
    const pre = h("pre", { class: "undo-diff new-file" });
    pre.append(h("span", { class: "hint" }, `New file · ${d.afterSize === 1 ? "1 byte" : `${d.afterSize} bytes`}\n`));
    if (d.after) pre.append(h("span", { class: "add" }, d.after.endsWith("\n") ? d.after : d.after + "\n"));
    return pre;
  }
  const pre = h("pre", { class: "undo-diff" });
  for (const l of lineDiff(d.before, d.after)) {
    pre.append(h("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same" }, `${l.op} ${l.text}\n`));
  }
  return pre;
}

export interface BlockActions {
  undo(files: string[] | null, force: boolean): Promise<UndoOutcome>;
  diff(path: string): Promise<FileDiff>;
  /** After an undo (done or refused), so the caller can refresh. */
  changed(): void;
}

/** The block under one turn. */
export function turnBlock(t: ChangedTurn, act: BlockActions): HTMLElement {
  const box = h("div", { class: "turn-changes", "data-changes-turn": t.turn_id });
  const status = h("div", { class: "undo-status", role: "status" });
  const head = h("div", { class: "undo-head" }, h("strong", {}, summary(t)));
  const undoAll = h("button", { class: "small", type: "button", "data-undo": "turn" }, "Undo these changes");
  undoAll.hidden = !!t.undone;
  head.append(undoAll);
  const list = h("ul", { class: "undo-files" });
  // A file written into a new folder is recorded as the folder: the
  // files in it are listed by name, each with its preview.
  const newFolder = (f: ChangedFile) => f.before.kind === "none" && f.after.kind === "dir";
  for (const f of t.files) {
    const inside = newFolder(f) ? filesIn(f.path, f.after) : [];
    for (const path of inside) {
      const li = h("li", { "data-path": path, "data-in": f.path }, h("code", {}, path), " ", h("span", { class: "hint" }, `new file (in the new folder ${f.path}/)`));
      const show = h("button", { class: "small", type: "button", "data-undo": "diff" }, "Show");
      let shown: HTMLElement | undefined;
      show.addEventListener("click", async () => {
        if (shown) { shown.remove(); shown = undefined; return; }
        try {
          shown = diffView(await act.diff(path));
          li.append(shown);
        } catch (ex) {
          status.textContent = errText(ex);
        }
      });
      li.append(" ", show);
      list.append(li);
    }
    const li = h("li", { "data-path": f.path }, h("code", {}, f.path + (newFolder(f) ? "/" : "")), " ", h("span", { class: "hint" }, changeWord(f)));
    const diffBtn = h("button", { class: "small", type: "button", "data-undo": "diff" }, f.before.kind === "none" ? "Show" : "Diff");
    if (f.after.kind === "dir" || f.before.kind === "dir") diffBtn.hidden = true; // a folder: no text to show (its files are listed)
    const restore = h("button", { class: "small", type: "button", "data-undo": "file" }, "Restore");
    restore.hidden = !!t.undone;
    let shown: HTMLElement | undefined;
    diffBtn.addEventListener("click", async () => {
      if (shown) { shown.remove(); shown = undefined; return; }
      try {
        shown = diffView(await act.diff(f.path));
        li.append(shown);
      } catch (ex) {
        status.textContent = errText(ex);
      }
    });
    restore.addEventListener("click", () => void run([f.path], false));
    li.append(" ", diffBtn, " ", restore);
    list.append(li);
  }
  async function run(files: string[] | null, force: boolean): Promise<void> {
    status.replaceChildren("Restoring…");
    let out: UndoOutcome;
    try {
      out = await act.undo(files, force);
    } catch (ex) {
      status.replaceChildren(errText(ex));
      return;
    }
    if (out.conflict) {
      status.replaceChildren(conflictQuestion(out, files, run));
      return;
    }
    if (out.error) {
      status.replaceChildren(out.error);
      return;
    }
    status.replaceChildren(`Restored ${out.restored.length} file${out.restored.length === 1 ? "" : "s"}.`);
    act.changed();
  }
  undoAll.addEventListener("click", () => void run(null, false));
  box.append(head, list, status);
  return box;
}

/** The conflict, shown, and the question: restore anyway, or keep. */
function conflictQuestion(out: UndoOutcome, files: string[] | null, run: (f: string[] | null, force: boolean) => Promise<void>): HTMLElement {
  const q = h("div", { class: "undo-conflict" },
    h("p", {}, "These files were changed after this turn (by you or a later turn). Restoring them overwrites those changes — which can itself be undone:"));
  const ul = h("ul", {});
  for (const c of out.conflicts ?? []) ul.append(h("li", {}, h("code", {}, c.path), " ", h("span", { class: "hint" }, c.current.kind === "none" ? "now deleted" : "changed since")));
  const force = h("button", { class: "small danger", type: "button", "data-undo": "force" }, "Restore anyway");
  const keep = h("button", { class: "small", type: "button", "data-undo": "keep" }, "Keep them");
  force.addEventListener("click", () => void run(files, true));
  keep.addEventListener("click", () => q.replaceWith(h("span", {}, "Nothing was changed.")));
  q.append(ul, force, " ", keep);
  return q;
}

export function bytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(n % (1 << 30) ? 1 : 0)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/** The settings' section on undo: the caps, what is kept, and where. */
export function storageSection(s: UndoStorage): HTMLElement {
  return h("section", { class: "undo-storage" },
    h("h3", {}, "Undo of file changes"),
    h("p", {}, `Before changing a file Jarvis keeps its previous state, so that a turn's changes can be undone. ` +
      `Kept: ${s.checkpoints} checkpoint${s.checkpoints === 1 ? "" : "s"}, ${bytes(s.usedBytes)} of ${bytes(s.maxBytes)}; ` +
      `older than ${s.maxAgeDays} days or past the size cap, the oldest are removed first. ` +
      `Deleted files go to Jarvis's trash (${bytes(s.trashBytes)}), emptied by the same rules.`),
    h("p", { class: "hint" }, `Checkpoints: ${s.checkpointDir} · Trash: ${s.trashDir}`),
    h("p", { class: "hint" }, "Commands (run_command) cannot be undone."));
}

export interface MountOptions {
  /** The settings panel; the undo section is added whenever it is filled. */
  settings?: HTMLElement;
  box: HTMLElement;
  sessionId: () => string;
  api: () => UndoAPI;
}

/** Keeps the blocks of the current session's changed turns in box. */
export function mountUndo(o: MountOptions): { refresh(): Promise<void> } {
  let turns: ChangedTurn[] = [];
  let forSession = "";
  const blocks = new Map<string, HTMLElement>();
  const shown = new Map<string, string>(); // turn id → the data its block shows
  let placing = false;

  function place(): void {
    placing = true;
    try {
      const lastOf = new Map<string, Element>();
      for (const el of Array.from(o.box.querySelectorAll<HTMLElement>(":scope > [data-turn]"))) lastOf.set(el.dataset.turn!, el);
      for (const t of turns) {
        if (t.files.length === 0) continue;
        const last = lastOf.get(t.turn_id);
        let b = blocks.get(t.turn_id);
        if (!last) { b?.remove(); continue; }
        if (!b) {
          b = turnBlock(t, {
            undo: (files, force) => o.api().UndoTurn(t.turn_id, files, force),
            diff: (path) => o.api().TurnFileDiff(t.turn_id, path),
            changed: () => void refresh(),
          });
          blocks.set(t.turn_id, b);
        }
        if (last.nextElementSibling !== b) last.after(b);
      }
    } finally {
      placing = false;
    }
  }

  async function refresh(): Promise<void> {
    const sid = o.sessionId();
    if (!sid) return;
    try {
      turns = await o.api().ChangedTurns(sid);
    } catch {
      return; // a window without checkpoints shows nothing
    }
    if (sid !== forSession) {
      for (const b of blocks.values()) b.remove();
      blocks.clear();
      shown.clear();
    }
    forSession = sid;
    // A block whose turn is unchanged stays as it is (an open diff or
    // conflict question is kept); a changed one is made anew.
    const now = new Set<string>();
    for (const t of turns) {
      const data = JSON.stringify(t);
      now.add(t.turn_id);
      if (shown.get(t.turn_id) !== data) {
        blocks.get(t.turn_id)?.remove();
        blocks.delete(t.turn_id);
        shown.set(t.turn_id, data);
      }
    }
    for (const id of Array.from(blocks.keys())) {
      if (!now.has(id)) {
        blocks.get(id)?.remove();
        blocks.delete(id);
        shown.delete(id);
      }
    }
    place();
  }

  // Re-place after the transcript re-renders (session switch, new items).
  new MutationObserver(() => {
    if (placing) return;
    if (o.sessionId() !== forSession) void refresh();
    else place();
  }).observe(o.box, { childList: true });

  const fileTools = new Set(["write_file", "edit_file", "make_dir", "move_path", "delete_path"]);
  on("tool:decision", (d: any) => {
    if (d?.sessionId === o.sessionId() && fileTools.has(d.tool) && d.decision === "allowed") void refresh();
  });
  on("undo:changed", () => void refresh());
  // `jarvis undo turn` beside a running window tells it (app.UndoCommand).
  on("app:second-instance", (d: any) => {
    if (Array.isArray(d?.args) && d.args[0] === "undo") void refresh();
  });
  if (o.settings) {
    const settings = o.settings;
    let adding = false;
    new MutationObserver(async () => {
      if (adding || settings.hidden || settings.querySelector(".undo-storage")) return;
      adding = true;
      try {
        settings.append(storageSection(await o.api().UndoStorage()));
      } catch {
        // a window without checkpoints has no such section
      } finally {
        adding = false;
      }
    }).observe(settings, { childList: true, attributes: true, attributeFilter: ["hidden"] });
  }
  void refresh();
  return { refresh };
}
