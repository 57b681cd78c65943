package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
// nothing changed when a file changed since, unless --force). It uses the
// data dir's checkpoints and audit log directly, which is safe beside a
// running window (SQLite between processes); that window is then told.
func UndoCommand(args []string, o UndoCommandOptions) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "turn") {
		fmt.Fprint(o.Stderr, undoUsage)
		return UndoExitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("jarvis undo "+sub, flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	workspace := fs.String("workspace", "", "folder the file tools are confined to (default: <data-dir>/workspace)")
	asJSON := fs.Bool("json", false, "print JSON")
	session := fs.String("session", "", "list: only this session's turns")
	force := fs.Bool("force", false, "turn: restore even files changed since the turn")
	var files multi
	fs.Var(&files, "file", "turn: restore only this file (repeatable)")
	// Flags may come before or after the turn id.
	var pos []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return UndoExitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if (sub == "list" && len(pos) != 0) || (sub == "turn" && len(pos) != 1) {
		fmt.Fprint(o.Stderr, undoUsage)
		return UndoExitUsage
	}
	if *dataDir == "" {
		d, err := o.DefaultDataDir()
		if err != nil {
			fmt.Fprintln(o.Stderr, "jarvis undo:", err)
			return UndoExitError
		}
		*dataDir = d
	}
	if *workspace == "" {
		*workspace = filepath.Join(*dataDir, "workspace")
	}
	if _, err := os.Stat(*workspace); err != nil {
		fmt.Fprintln(o.Stderr, "jarvis undo: workspace:", err)
		return UndoExitError
	}
	// Holding the lock keeps a window from starting meanwhile; a running
	// one is told afterwards.
	lock, lerr := instance.Acquire(*dataDir)
	running := errors.Is(lerr, instance.ErrRunning)
	if lerr == nil {
		defer lock.Release()
	} else if !running {
		fmt.Fprintln(o.Stderr, "jarvis undo:", lerr)
		return UndoExitError
	}
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: *workspace, AuditPath: filepath.Join(*dataDir, "audit.db"),
		AuditKeyring: o.Keyring, PolicyPath: filepath.Join(*dataDir, "policy.json"), Headless: true})
	if err != nil {
		fmt.Fprintln(o.Stderr, "jarvis undo:", err)
		return UndoExitError
	}
	defer r.Close()
	ctx := context.Background()

	if sub == "list" {
		turns, err := r.Checkpoints().List(ctx, *session)
		if err != nil {
			fmt.Fprintln(o.Stderr, "jarvis undo:", err)
			return UndoExitError
		}
		if *asJSON {
			if turns == nil {
				turns = []checkpoint.Turn{}
			}
			b, _ := json.MarshalIndent(turns, "", "  ")
			fmt.Fprintln(o.Stdout, string(b))
			return UndoExitOK
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
			fmt.Fprintf(o.Stdout, "%s\t%s\t%d file(s)%s: %s\n", t.TurnID, t.Time.UTC().Format("2006-01-02 15:04:05Z"), len(t.Files), state, strings.Join(names, ", "))
		}
		return UndoExitOK
	}

	res, err := r.Undo(ctx, pos[0], files, *force)
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(o.Stdout, string(b))
	}
	if running && o.Notify != nil && len(res.Restored) > 0 {
		if nerr := o.Notify(*dataDir, []string{"undo", "turn", pos[0]}); nerr != nil {
			fmt.Fprintln(o.Stderr, "jarvis undo: the running window was not told:", nerr)
		}
	}
	switch {
	case errors.Is(err, checkpoint.ErrConflict):
		fmt.Fprintf(o.Stderr, "jarvis undo: %v\n", err)
		for _, c := range res.Conflicts {
			fmt.Fprintf(o.Stderr, "  %s: changed since the turn (now %s)\n", c.Path, c.Current.Kind)
		}
		fmt.Fprintln(o.Stderr, "run again with --force to restore them anyway (that, too, can be undone)")
		return UndoExitConflict
	case err != nil:
		fmt.Fprintln(o.Stderr, "jarvis undo:", err)
		return UndoExitError
	}
	if !*asJSON {
		fmt.Fprintf(o.Stdout, "restored %d file(s) of turn %s: %s\nto take this back: jarvis undo turn %s\n",
			len(res.Restored), res.TurnID, strings.Join(res.Restored, ", "), res.UndoTurn)
	}
	return UndoExitOK
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }
