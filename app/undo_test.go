package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/checkpoint"
	"jarvis/app/gate"
	"jarvis/internal/instance"
)

// undoCLI runs `jarvis undo ARGS` on dataDir and ws.
func undoCLI(t *testing.T, dataDir, ws string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--data-dir", dataDir, "--workspace", ws)
	code := UndoCommand(args, UndoCommandOptions{Stdout: &out, Stderr: &errOut,
		DefaultDataDir: func() (string, error) { return "", errors.New("not used") }})
	return code, out.String(), errOut.String()
}

// TestHeadlessChangesAreUndoneFromTheCommandLine: a scripted model edits a
// file through `jarvis --headless`'s gate; the audit row names the
// checkpoint; `jarvis undo list` shows the turn; `jarvis undo turn` refuses
// (exit 3, nothing changed) while the user's later edit is there, restores
// the exact bytes and mode once it is gone, is audited, and can be undone.
func TestHeadlessChangesAreUndoneFromTheCommandLine(t *testing.T) {
	d := newRealDesktop(t, 60, "")
	Shutdown(d.app) // one gate per service: the window goes away

	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	orig := "# Plan\nship on Friday\n"
	os.WriteFile(filepath.Join(ws, "plan.md"), []byte(orig), 0o640)
	os.Chmod(filepath.Join(ws, "plan.md"), 0o640)
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"edit_file","action":"allow"},{"tool":"write_file","action":"allow"}]}`), 0o600)
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: policy, Headless: true,
		Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	runHeadless(t, d.c, runner)

	r, err := d.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j_undo"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.c.Chat(context.Background(), r.GeneralSessionID,
		`[[tool edit_file {"path":"plan.md","old_string":"Friday","new_string":"Monday"}]] [[tool write_file {"path":"notes/new.md","content":"hi"}]]`)
	if err != nil {
		t.Fatal(err)
	}
	edited := "# Plan\nship on Monday\n"
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.md")); string(b) != edited {
		t.Fatalf("plan.md = %q (reply %+v)", b, res)
	}
	es, err := runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 2 || !strings.HasPrefix(es[0].Checkpoint, "checkpoint-") || !strings.HasPrefix(es[1].Checkpoint, "checkpoint-") {
		t.Fatalf("audit rows %+v %v: want both to name their checkpoint", es, err)
	}

	code, out, _ := undoCLI(t, dir, ws, "list", "--session", r.GeneralSessionID)
	// The two calls of the turn run concurrently: either order.
	if code != 0 || !(strings.Contains(out, "2 file(s): plan.md, notes\n") || strings.Contains(out, "2 file(s): notes, plan.md\n")) {
		t.Fatalf("list: %d %q", code, out)
	}
	turn := strings.Fields(out)[0]

	// The user changes plan.md afterwards: undo refuses and changes nothing.
	mine := edited + "my own line\n"
	os.WriteFile(filepath.Join(ws, "plan.md"), []byte(mine), 0o640)
	code, _, errOut := undoCLI(t, dir, ws, "turn", turn)
	if code != UndoExitConflict || !strings.Contains(errOut, "plan.md: changed since the turn") {
		t.Fatalf("conflict: %d %q", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.md")); string(b) != mine {
		t.Fatalf("a refused undo changed plan.md: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes", "new.md")); err != nil {
		t.Fatalf("a refused undo changed notes/: %v", err)
	}

	os.WriteFile(filepath.Join(ws, "plan.md"), []byte(edited), 0o640)
	code, out, errOut = undoCLI(t, dir, ws, "turn", turn)
	if code != 0 {
		t.Fatalf("undo: %d %q %q", code, out, errOut)
	}
	fi, _ := os.Stat(filepath.Join(ws, "plan.md"))
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.md")); string(b) != orig || fi.Mode().Perm() != 0o640 {
		t.Fatalf("after undo plan.md = %q %v", b, fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(ws, "notes")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folder the turn created is still there: %v", err)
	}
	// Audited: the conflict (held: stopped to ask the user, whose "Keep
	// them" is a choice, not a denial) and the undo (allowed), each naming
	// a checkpoint where one was taken.
	es, _ = runner.Audit().List(context.Background(), audit.Filter{})
	if len(es) != 4 || es[2].Tool != "undo" || es[2].Decision != "held" || es[3].Tool != "undo" || es[3].Decision != audit.Allowed || es[3].Checkpoint == "" {
		t.Fatalf("undo audit rows %+v", es)
	}
	// The undo is undoable.
	undoTurn := strings.TrimSpace(out[strings.LastIndex(out, " ")+1:])
	if code, out, errOut := undoCLI(t, dir, ws, "turn", undoTurn); code != 0 {
		t.Fatalf("undo of the undo: %d %q %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.md")); string(b) != edited {
		t.Fatalf("after undoing the undo plan.md = %q", b)
	}
	// Undoing the first turn again says it was already undone.
	if code, _, errOut := undoCLI(t, dir, ws, "turn", turn); code != UndoExitError || !strings.Contains(errOut, "already undone") {
		t.Fatalf("second undo: %d %q", code, errOut)
	}
	if code, _, _ := undoCLI(t, dir, ws, "turn"); code != UndoExitUsage {
		t.Fatalf("usage: %d", code)
	}
}

// TestWindowUndoBindings: the window's bindings list a turn's files, give
// the two sides of a file for the diff view, show a conflict without
// changing anything, and restore one file.
func TestWindowUndoBindings(t *testing.T) {
	d := newRealDesktop(t, 60, `{"rules":[{"tool":"write_file","action":"allow"}]}`)
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.ws, "a.txt"), []byte("old a\n"), 0o644)
	if _, err := d.c.Chat(context.Background(), s.SessionID, `[[tool write_file {"path":"a.txt","content":"new a\n"}]] [[tool write_file {"path":"b.txt","content":"b\n"}]]`); err != nil {
		t.Fatal(err)
	}
	var turns []checkpoint.Turn
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if turns, err = d.app.ChangedTurns(s.SessionID); err == nil && len(turns) == 1 && len(turns[0].Files) == 2 {
			break
		}
	}
	if len(turns) != 1 || len(turns[0].Files) != 2 {
		t.Fatalf("changed turns %+v %v", turns, err)
	}
	diff, err := d.app.TurnFileDiff(turns[0].TurnID, "a.txt")
	if err != nil || diff.Before != "old a\n" || diff.After != "new a\n" || diff.Binary {
		t.Fatalf("diff %+v %v", diff, err)
	}
	os.WriteFile(filepath.Join(d.ws, "b.txt"), []byte("user\n"), 0o644)
	out, err := d.app.UndoTurn(turns[0].TurnID, nil, false)
	if err != nil || !out.Conflict || len(out.Conflicts) != 1 || out.Conflicts[0].Path != "b.txt" {
		t.Fatalf("conflict outcome %+v %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(d.ws, "a.txt")); string(b) != "new a\n" {
		t.Fatalf("a conflicting undo changed a.txt: %q", b)
	}
	out, err = d.app.UndoTurn(turns[0].TurnID, []string{"a.txt"}, false)
	if err != nil || out.Error != "" || len(out.Restored) != 1 {
		t.Fatalf("per-file restore %+v %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(d.ws, "a.txt")); string(b) != "old a\n" {
		t.Fatalf("a.txt after restore: %q", b)
	}
	st, err := d.app.UndoStorage()
	if err != nil || st.MaxBytes != 1<<30 || st.MaxAgeDays != 30 || st.Checkpoints != 3 || st.UsedBytes == 0 {
		t.Fatalf("storage %+v %v: want the default caps and 3 checkpoints (2 writes, 1 restore; the refused undo took none)", st, err)
	}
	raw, _ := json.Marshal(out)
	if !strings.Contains(string(raw), `"undo_turn_id":"undo-`) {
		t.Fatalf("outcome JSON %s", raw)
	}
}

// TestUndoCommandTellsTheRunningWindow: with the data dir's lock held by a
// running window that does not answer on the control socket (an older
// build, or one still starting), `jarvis undo turn` still restores (SQLite
// is shared between processes) and then tells that window; without one it
// tells nobody.
func TestUndoCommandTellsTheRunningWindow(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("before"), 0o644)
	undoRunner(t, dir, ws, [2]string{"t1", `{"path":"a.txt","content":"after"}`})
	lock, err := instance.Acquire(dir) // the running window
	if err != nil {
		t.Fatal(err)
	}
	var told [][]string
	var out, errOut bytes.Buffer
	code := UndoCommand([]string{"turn", "t1", "--data-dir", dir, "--workspace", ws}, UndoCommandOptions{Stdout: &out, Stderr: &errOut,
		Notify: func(d string, args []string) error {
			if d != dir {
				t.Errorf("told the window of %s", d)
			}
			told = append(told, args)
			return nil
		}})
	lock.Release()
	if code != 0 || len(told) != 1 || strings.Join(told[0], " ") != "undo turn t1" {
		t.Fatalf("exit %d, told %v, %q %q", code, told, out.String(), errOut.String())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "before" {
		t.Fatalf("a.txt = %q", b)
	}
	// No window: nobody is told, the undo of the undo still works.
	undoTurn := strings.TrimSpace(out.String()[strings.LastIndex(out.String(), " ")+1:])
	told = nil
	code = UndoCommand([]string{"turn", undoTurn, "--data-dir", dir, "--workspace", ws}, UndoCommandOptions{Stdout: &out, Stderr: &errOut,
		Notify: func(string, []string) error { told = append(told, nil); return nil }})
	if code != 0 || len(told) != 0 {
		t.Fatalf("without a window: exit %d, told %d times", code, len(told))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "after" {
		t.Fatalf("a.txt after undoing the undo = %q", b)
	}
}

// TestDiffOfAFileInANewFolder: write_file into a folder that did not exist
// records the folder (undo removes it); the window lists the file inside it
// by name and previews it as a new file, so the diff of that path gives the
// file's content (it said "not among the files", and the folder's diff was
// empty).
func TestDiffOfAFileInANewFolder(t *testing.T) {
	d := newRealDesktop(t, 60, `{"rules":[{"tool":"write_file","action":"allow"}]}`)
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.Chat(context.Background(), s.SessionID, `[[tool write_file {"path":"plans/lake/list.md","content":"tent\nstove\n"}]]`); err != nil {
		t.Fatal(err)
	}
	var turns []checkpoint.Turn
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if turns, err = d.app.ChangedTurns(s.SessionID); err == nil && len(turns) == 1 {
			break
		}
	}
	if len(turns) != 1 || len(turns[0].Files) != 1 || turns[0].Files[0].Path != "plans" || turns[0].Files[0].After.Kind != checkpoint.Dir {
		t.Fatalf("changed turns %+v %v: want the new folder plans", turns, err)
	}
	diff, err := d.app.TurnFileDiff(turns[0].TurnID, "plans/lake/list.md")
	if err != nil || diff.BeforeKind != checkpoint.None || diff.AfterKind != checkpoint.File || diff.Before != "" || diff.After != "tent\nstove\n" || diff.AfterSize != 11 {
		t.Fatalf("diff of the new file %+v %v", diff, err)
	}
	if _, err := d.app.TurnFileDiff(turns[0].TurnID, "plans/other.md"); err == nil {
		t.Fatal("a path the turn did not create has a diff")
	}
	if _, err := d.app.TurnFileDiff(turns[0].TurnID, "plans/../a.txt"); err == nil {
		t.Fatal("a path out of the folder has a diff")
	}
}
