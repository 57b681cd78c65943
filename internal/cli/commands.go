package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"jarvis/app"
	"jarvis/app/audit"
	"jarvis/app/backup"
	"jarvis/app/mcp"
	"jarvis/internal/instance"
	"jarvis/service"
	"jarvis/service/acprt"
	"jarvis/service/secrets"
	"jarvis/tools"
)

// runUndo is `jarvis undo …` (app.UndoCommand): the data dir and the audit
// key as the window has them; a running window or headless process on the
// same data dir is told over the single-instance handover.
func runUndo(args []string, env Env) int {
	return app.UndoCommand(args, app.UndoCommandOptions{
		DefaultDataDir: func() (string, error) { return service.DefaultDataDir(env.Getenv) },
		Keyring:        secrets.New(env.Getenv),
		Stdout:         env.Stdout,
		Stderr:         env.Stderr,
		Notify: func(dataDir string, a []string) error {
			return instance.Handover(instance.UniqueID(dataDir), a)
		},
	})
}

// runConfig is `jarvis config approve [--yes]` (service.ApproveConfigCommand).
func runConfig(args []string, env Env) int {
	if len(args) == 0 || args[0] != "approve" {
		fmt.Fprintln(env.Stderr, "usage: jarvis config approve [--yes] [--data-dir DIR] [--config FILE]")
		return 2
	}
	return service.ApproveConfigCommand("jarvis", args[1:], env.Stdin, env.Stdout, env.Stderr, env.Getenv)
}

// backupRunner is `jarvis backup FILE`, `jarvis restore [--force] FILE` and
// `jarvis export [--format md|json] FILE` (app/backup), over the folders
// the window uses.
func backupRunner(verb string) func([]string, Env) int {
	return func(args []string, env Env) int {
		return backup.Command(append([]string{verb}, args...), backup.CommandOptions{
			Paths: func() (backup.Paths, error) {
				var p backup.Paths
				var err error
				if p.DataDir, err = service.DefaultDataDir(env.Getenv); err != nil {
					return p, err
				}
				if p.ConfigPath, err = service.DefaultConfigPath(); err != nil {
					return p, err
				}
				if p.MCPConfig, err = DefaultMCPConfig(); err != nil {
					return p, err
				}
				p.AuditKeyDir, err = audit.DefaultKeyDir()
				return p, err
			},
			Keyring: secrets.New(env.Getenv),
			Stdout:  env.Stdout,
			Stderr:  env.Stderr,
		})
	}
}

// runConfine is the hidden helper a confined program is started through;
// tools.ConfineMain returns only on failure (126, as a shell does for a
// program it cannot run).
func runConfine(args []string, env Env) int {
	err := tools.ConfineMain(args)
	fmt.Fprintln(env.Stderr, "jarvis:", err)
	return 126
}

// runMCP is `jarvis mcp import [--from claude|cursor|FILE] [--mcp-config FILE]`,
// which copies the MCP servers of Claude Desktop's or Cursor's config into
// mcp.json; list, approve, enable, disable and secret set are
// app.MCPCommand's.
func runMCP(args []string, env Env) int {
	if len(args) == 0 || args[0] != "import" {
		var opts []secrets.Option
		if p, err := DefaultMCPConfig(); err == nil { // the fallback file beside config.json, as the window's
			opts = append(opts, secrets.WithFile(SecretsFile(p), nil))
		}
		keys := secrets.New(env.Getenv, opts...)
		return app.MCPCommand(args, app.MCPCommandOptions{
			DefaultDataDir:   func() (string, error) { return service.DefaultDataDir(env.Getenv) },
			DefaultMCPConfig: DefaultMCPConfig,
			SetSecret:        keys.Set, Secret: keys.Get,
			Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr,
		})
	}
	fs := flag.NewFlagSet("jarvis mcp import", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	from := fs.String("from", "claude", "claude, cursor, or the path of a config file with an mcpServers object")
	dst := fs.String("mcp-config", "", "the mcp.json to import into (default: <user config dir>/jarvis/mcp.json)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	src := *from
	if known, err := mcp.ImportSources(); err == nil {
		if p, ok := known[src]; ok {
			src = p
		}
	}
	if *dst == "" {
		p, err := DefaultMCPConfig()
		if err != nil {
			return fail(env, "mcp import", err)
		}
		*dst = p
	}
	added, skipped, err := mcp.Import(*dst, src)
	if err != nil {
		return fail(env, "mcp import", err)
	}
	for _, n := range skipped {
		fmt.Fprintf(env.Stdout, "kept %s: %s already has a server by that name\n", n, *dst)
	}
	fmt.Fprintf(env.Stdout, "imported %d server(s) from %s into %s\n", len(added), src, *dst)
	return 0
}

// runInbox is `jarvis inbox [--all] | done ID | allow ID | deny ID`; its exit
// status: 0, 1 on failure, 2 for usage.
func runInbox(args []string, env Env) int {
	fs := flag.NewFlagSet("jarvis inbox", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	all := fs.Bool("all", false, "list the items marked done too")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: jarvis inbox [--all] | jarvis inbox done ID | jarvis inbox allow ID | jarvis inbox deny ID  [--data-dir DIR]")
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
		d, err := service.DefaultDataDir(env.Getenv)
		if err != nil {
			return fail(env, "inbox", err)
		}
		*dataDir = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	switch verb {
	case "":
		err = printInbox(ctx, env.Stdout, *dataDir, *all)
	case "done":
		// The Jarvis running on the data dir marks it in the Inbox it
		// keeps (its service's); else the data dir's own.
		var running bool
		if running, err = app.DoneFromTerminal(*dataDir, id); err == nil && !running {
			err = service.MarkInboxDone(ctx, *dataDir, id)
		}
		if err == nil {
			fmt.Fprintln(env.Stdout, "marked done:", id)
		}
	case "allow", "deny":
		if err = app.DecideFromTerminal(*dataDir, id, verb); err == nil {
			fmt.Fprintf(env.Stdout, "%s: %s; the task's run goes on\n", id, map[string]string{"allow": "allowed", "deny": "denied"}[verb])
		}
	default:
		fs.Usage()
		return 2
	}
	if err != nil {
		return fail(env, "inbox", err)
	}
	return 0
}

// printInbox lists the Inbox of the Jarvis running on dataDir (its
// service's, which under --service-url is not kept in dataDir: the one its
// allow and deny act on), or dataDir's own when none runs.
func printInbox(ctx context.Context, w io.Writer, dataDir string, all bool) error {
	in, running, err := app.InboxFromTerminal(dataDir, all)
	if err == nil && !running {
		in, err = service.ReadInbox(ctx, dataDir, all)
	}
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

// runMCPBridge is the hidden stdio MCP bridge an ACP agent starts
// (acprt.Bridge): its endpoint and token come from the environment.
func runMCPBridge(_ []string, env Env) int {
	if err := acprt.Bridge(context.Background(), env.Getenv, env.Stdin, env.Stdout); err != nil {
		return fail(env, "MCP bridge", err)
	}
	return 0
}
