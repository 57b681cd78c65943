package main

// Scheduled tasks in the desktop binary: tasks.json beside the config file,
// the systemd user unit of "Run tasks when Jarvis is closed", and `jarvis
// inbox` in a terminal:
//
//	jarvis inbox [--all] [--data-dir DIR]        the Inbox, newest first
//	jarvis inbox done ID [--data-dir DIR]        mark an item done
//	jarvis inbox allow|deny ID [--data-dir DIR]  decide a call waiting for approval
//	                                             (handed to the running Jarvis)

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"jarvis/app"
	"jarvis/app/inbox"
	"jarvis/service"
)

// tasksFile is tasks.json, beside the config file.
func tasksFile(l *launch) string { return filepath.Join(filepath.Dir(l.configPath), "tasks.json") }

// unitOptions is the systemd user unit of this binary and data dir; nil
// where there is no systemd (not Linux) or the binary cannot name itself.
func unitOptions(l *launch) *inbox.UnitOptions {
	if runtime.GOOS != "linux" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	args := []string{"--data-dir", l.dataDir, "--config", l.configPath}
	if l.workspace != "" {
		args = append(args, "--workspace", l.workspace)
	}
	return &inbox.UnitOptions{Exe: exe, Args: args}
}

// runInbox is `jarvis inbox …`; its exit status: 0, 1 on failure, 2 for usage.
func runInbox(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("jarvis inbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	all := fs.Bool("all", false, "list the items marked done too")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: jarvis inbox [--all] | jarvis inbox done ID | jarvis inbox allow ID | jarvis inbox deny ID  [--data-dir DIR]")
	}
	var verb, id string
	rest := args
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		verb, rest = rest[0], rest[1:]
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			fs.Usage()
			return 2
		}
		id, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if *dataDir == "" {
		d, err := service.DefaultDataDir(getenv)
		if err != nil {
			fmt.Fprintln(stderr, "jarvis inbox:", err)
			return 1
		}
		*dataDir = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	switch verb {
	case "":
		err = printInbox(ctx, stdout, *dataDir, *all)
	case "done":
		if err = service.MarkInboxDone(ctx, *dataDir, id); err == nil {
			fmt.Fprintln(stdout, "marked done:", id)
		}
	case "allow", "deny":
		if err = app.DecideFromTerminal(*dataDir, id, verb); err == nil {
			fmt.Fprintf(stdout, "%s: %s; the task's run goes on\n", id, map[string]string{"allow": "allowed", "deny": "denied"}[verb])
		}
	default:
		fs.Usage()
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "jarvis inbox:", err)
		return 1
	}
	return 0
}

func printInbox(ctx context.Context, w io.Writer, dataDir string, all bool) error {
	in, err := service.ReadInbox(ctx, dataDir, all)
	if err != nil {
		return err
	}
	if len(in.Items) == 0 {
		fmt.Fprintln(w, "The Inbox is empty.")
		return nil
	}
	fmt.Fprintf(w, "%d unread\n", in.Unread)
	for _, it := range in.Items {
		mark := " "
		if !it.Read && it.State != "done" {
			mark = "•"
		}
		when := it.CreatedAt
		if t, err := time.Parse(time.RFC3339Nano, it.CreatedAt); err == nil {
			when = t.Local().Format("Mon 2 Jan 15:04")
		}
		fmt.Fprintf(w, "%s %s  %-8s %-8s %s\n", mark, when, it.Kind, it.State, it.Title)
		if body := strings.TrimSpace(it.Body); body != "" {
			first, _, _ := strings.Cut(body, "\n")
			if len([]rune(first)) > 100 {
				first = string([]rune(first)[:99]) + "…"
			}
			fmt.Fprintf(w, "    %s\n", first)
		}
		fmt.Fprintf(w, "    id %s", it.ID)
		if it.SessionID != "" {
			fmt.Fprintf(w, "  conversation %s", it.SessionID)
		}
		fmt.Fprintln(w)
	}
	return nil
}
