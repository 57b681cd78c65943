package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"jarvis/app/audit"
	"jarvis/app/checkpoint"
	"jarvis/internal/instance"
)

// Exit statuses of `jarvis undo`.
const (
	UndoExitOK       = 0
	UndoExitError    = 1
	UndoExitUsage    = 2
	UndoExitConflict = 3 // files changed since the turn; nothing was changed
)

// UndoCommandOptions is what `jarvis undo` needs from main.
type UndoCommandOptions struct {
	// DefaultDataDir is the data dir when --data-dir is not given.
	DefaultDataDir func() (string, error)
	// Keyring keeps the audit chain's key, as for the window.
	Keyring audit.KeyStore
	Stdout  io.Writer
	Stderr  io.Writer
	// Notify tells the window running on dataDir that turns were undone
	// (instance.Handover), so its transcript shows it; nil: not told.
	Notify func(dataDir string, args []string) error
}

const undoUsage = `usage:
  jarvis undo list [--session ID] [--json] [--data-dir DIR] [--workspace DIR]
  jarvis undo turn TURN_ID [--file PATH]... [--force] [--json] [--data-dir DIR] [--workspace DIR]
`

// UndoCommand runs `jarvis undo ARGS` and returns the exit status: list
// prints the turns that changed files; turn takes one back (exit 3 and
// nothing changed when a file changed since, unless --force). When a
// window or `jarvis --headless` runs on the data dir (it holds the lock) and
// answers on its control socket for the same workspace, the request is
// handed to it (ServeUndo) and its answer printed; otherwise the command
// uses the data dir's checkpoints and audit log itself, which is safe
// beside a running process (SQLite between processes), and tells that
// process's window afterwards.
func UndoCommand(args []string, o UndoCommandOptions) int {
	req, dataDir, code := parseUndo(args, o)
	if code >= 0 {
		return code
	}
	// Holding the lock keeps a window from starting meanwhile.
	lock, lerr := instance.Acquire(dataDir)
	running := errors.Is(lerr, instance.ErrRunning)
	if lerr == nil {
		defer lock.Release()
	} else if !running {
		fmt.Fprintln(o.Stderr, "jarvis undo:", lerr)
		return UndoExitError
	}
	if running {
		var ans undoAnswer
		// Longer than the 5 minutes the running process gives an undo.
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		err := instance.Call(ctx, dataDir, undoOp, req, &ans)
		cancel()
		switch {
		case err == nil && !ans.OtherWorkspace:
			io.WriteString(o.Stdout, ans.Stdout)
			io.WriteString(o.Stderr, ans.Stderr)
			return ans.Code
		case err != nil && !errors.Is(err, instance.ErrNotListening):
			// It may have undone part of it: not done again here.
			fmt.Fprintln(o.Stderr, "jarvis undo: the running Jarvis did not answer:", err)
			return UndoExitError
		}
		// It does not listen (an older build, or still starting), or it
		// runs on another workspace: done here.
	}
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: req.Workspace, AuditPath: filepath.Join(dataDir, "audit.db"),
		AuditKeyring: o.Keyring, PolicyPath: filepath.Join(dataDir, "policy.json"), Headless: true})
	if err != nil {
		fmt.Fprintln(o.Stderr, "jarvis undo:", err)
		return UndoExitError
	}
	defer r.Close()
	code, restored := runUndo(context.Background(), r, req, o.Stdout, o.Stderr)
	if running && o.Notify != nil && restored {
		if nerr := o.Notify(dataDir, []string{"undo", "turn", req.Turn}); nerr != nil {
			fmt.Fprintln(o.Stderr, "jarvis undo: the running window was not told:", nerr)
		}
	}
	return code
}

// undoRequest is one `jarvis undo`, parsed: what runUndo does, here or in
// the running instance.
type undoRequest struct {
	Sub       string   `json:"sub"`       // list | turn
	Workspace string   `json:"workspace"` // absolute, symlinks resolved
	Session   string   `json:"session,omitempty"`
	Turn      string   `json:"turn,omitempty"`
	Files     []string `json:"files,omitempty"`
	Force     bool     `json:"force,omitempty"`
	JSON      bool     `json:"json,omitempty"`
}

// undoAnswer is the running instance's answer: what the command prints and
// its exit status, or that it runs on another workspace.
type undoAnswer struct {
	Code           int    `json:"code"`
	Stdout         string `json:"stdout,omitempty"`
	Stderr         string `json:"stderr,omitempty"`
	OtherWorkspace bool   `json:"other_workspace,omitempty"`
}

// undoOp is the control socket request `jarvis undo` sends.
const undoOp = "undo"

// parseUndo reads the command line; code is the exit status to stop with,
// or -1 to go on.
func parseUndo(args []string, o UndoCommandOptions) (undoRequest, string, int) {
	if len(args) == 0 || (args[0] != "list" && args[0] != "turn") {
		fmt.Fprint(o.Stderr, undoUsage)
		return undoRequest{}, "", UndoExitUsage
	}
	req := undoRequest{Sub: args[0]}
	fs := flag.NewFlagSet("jarvis undo "+req.Sub, flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	fs.StringVar(&req.Workspace, "workspace", "", "folder the file tools are confined to (default: <data-dir>/workspace)")
	fs.BoolVar(&req.JSON, "json", false, "print JSON")
	fs.StringVar(&req.Session, "session", "", "list: only this session's turns")
	fs.BoolVar(&req.Force, "force", false, "turn: restore even files changed since the turn")
	var files multi
	fs.Var(&files, "file", "turn: restore only this file (repeatable)")
	// Flags may come before or after the turn id.
	var pos []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return req, "", UndoExitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if (req.Sub == "list" && len(pos) != 0) || (req.Sub == "turn" && len(pos) != 1) {
		fmt.Fprint(o.Stderr, undoUsage)
		return req, "", UndoExitUsage
	}
	if req.Sub == "turn" {
		req.Turn = pos[0]
	}
	req.Files = files
	if *dataDir == "" {
		d, err := o.DefaultDataDir()
		if err != nil {
			fmt.Fprintln(o.Stderr, "jarvis undo:", err)
			return req, "", UndoExitError
		}
		*dataDir = d
	}
	if req.Workspace == "" {
		req.Workspace = filepath.Join(*dataDir, "workspace")
	}
	ws, err := filepath.Abs(req.Workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		fmt.Fprintln(o.Stderr, "jarvis undo: workspace:", err)
		return req, "", UndoExitError
	}
	req.Workspace = ws
	return req, *dataDir, -1
}

// runUndo does req through u, printing as the command does; restored
// reports that files were put back.
func runUndo(ctx context.Context, u Undoer, req undoRequest, stdout, stderr io.Writer) (code int, restored bool) {
	if req.Sub == "list" {
		turns, err := u.Checkpoints().List(ctx, req.Session)
		if err != nil {
			fmt.Fprintln(stderr, "jarvis undo:", err)
			return UndoExitError, false
		}
		if req.JSON {
			if turns == nil {
				turns = []checkpoint.Turn{}
			}
			b, _ := json.MarshalIndent(turns, "", "  ")
			fmt.Fprintln(stdout, string(b))
			return UndoExitOK, false
		}
		for _, t := range turns {
			if len(t.Files) == 0 {
				continue
			}
			names := make([]string, len(t.Files))
			for i, f := range t.Files {
				names[i] = f.Path
			}
			state := ""
			if t.Undone {
				state = " (undone)"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%d file(s)%s: %s\n", t.TurnID, t.Time.UTC().Format("2006-01-02 15:04:05Z"), len(t.Files), state, strings.Join(names, ", "))
		}
		return UndoExitOK, false
	}

	res, err := u.Undo(ctx, req.Turn, req.Files, req.Force)
	restored = len(res.Restored) > 0
	if req.JSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(stdout, string(b))
	}
	switch {
	case errors.Is(err, checkpoint.ErrConflict):
		fmt.Fprintf(stderr, "jarvis undo: %v\n", err)
		for _, c := range res.Conflicts {
			fmt.Fprintf(stderr, "  %s: changed since the turn (now %s)\n", c.Path, c.Current.Kind)
		}
		fmt.Fprintln(stderr, "run again with --force to restore them anyway (that, too, can be undone)")
		return UndoExitConflict, restored
	case err != nil:
		fmt.Fprintln(stderr, "jarvis undo:", err)
		return UndoExitError, restored
	}
	if !req.JSON {
		fmt.Fprintf(stdout, "restored %d file(s) of turn %s: %s\nto take this back: jarvis undo turn %s\n",
			len(res.Restored), res.TurnID, strings.Join(res.Restored, ", "), res.UndoTurn)
	}
	return UndoExitOK, restored
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }
