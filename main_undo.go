package main

import (
	"io"
	"os"

	"jarvis/app"
	"jarvis/internal/instance"
	"jarvis/service"
	"jarvis/service/secrets"
)

// runUndo is `jarvis undo list|turn …` (app.UndoCommand): the data dir and
// the audit key as the window has them, and the running window, if any,
// told over the single-instance handover.
func runUndo(args []string, stderr io.Writer, getenv func(string) string) int {
	return app.UndoCommand(args, app.UndoCommandOptions{
		DefaultDataDir: func() (string, error) { return service.DefaultDataDir(getenv) },
		Keyring:        secrets.New(getenv),
		Stdout:         os.Stdout,
		Stderr:         stderr,
		Notify: func(dataDir string, a []string) error {
			return instance.Handover(instance.UniqueID(dataDir), a)
		},
	})
}
