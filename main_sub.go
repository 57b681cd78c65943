package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"jarvis/app"
	"jarvis/app/audit"
	"jarvis/app/backup"
	"jarvis/internal/instance"
	"jarvis/service"
	"jarvis/service/secrets"
	"jarvis/tools"
)

// subcommand runs the subcommands that are not the window: `jarvis undo
// list|turn …` (app.UndoCommand), `jarvis config approve`, `jarvis backup|restore|export`
// (app/backup) and the hidden confinement helper
// run_command starts programs through (tools.ConfineMain). handled is
// false for a normal launch.
func subcommand(args []string, stderr io.Writer, getenv func(string) string) (code int, handled bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "undo":
		return runUndo(args[1:], stderr, getenv), true
	case "inbox":
		return runInbox(args[1:], os.Stdout, stderr, getenv), true // main_inbox.go
	case "config":
		if len(args) > 1 && args[1] == "approve" { // service/config_approval.go
			return service.ApproveConfigCommand("jarvis", args[2:], os.Stdin, os.Stdout, stderr, getenv), true
		}
	case "backup", "restore", "export":
		return runBackup(args, stderr, getenv), true
	case tools.ConfineSubcommand:
		err := tools.ConfineMain(args[1:]) // returns only on failure
		fmt.Fprintln(stderr, "jarvis:", err)
		return 126, true
	}
	return 0, false
}

// runUndo is `jarvis undo …`: the data dir and the audit key as the window
// has them, and the running window, if any, told over the single-instance
// handover.
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

// runBackup is `jarvis backup FILE`, `jarvis restore [--force] FILE` and
// `jarvis export [--format md|json] FILE` (package app/backup), over the
// folders the window uses.
func runBackup(args []string, stderr io.Writer, getenv func(string) string) int {
	return backup.Command(args, backup.CommandOptions{
		Paths: func() (backup.Paths, error) {
			var p backup.Paths
			var err error
			if p.DataDir, err = service.DefaultDataDir(getenv); err != nil {
				return p, err
			}
			if p.ConfigPath, err = service.DefaultConfigPath(); err != nil {
				return p, err
			}
			if p.MCPConfig, err = defaultMCPConfig(); err != nil {
				return p, err
			}
			p.AuditKeyDir, err = audit.DefaultKeyDir()
			return p, err
		},
		Keyring: secrets.New(getenv),
		Stdout:  os.Stdout,
		Stderr:  stderr,
	})
}

// confineHelper is the argv prefix run_command starts programs through:
// this binary's hidden subcommand; nil (unconfined) when the binary cannot
// name itself.
func confineHelper(log *slog.Logger) []string {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("run_command will not be confined: the binary cannot find itself", "err", err)
		return nil
	}
	return []string{exe, tools.ConfineSubcommand}
}
