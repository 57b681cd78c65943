package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"jarvis/api"
	"jarvis/app"
	"jarvis/app/mcp"
	"jarvis/internal/approved"
	"jarvis/service"
	"jarvis/service/secrets"
)

// defaultMCPConfig is <user config dir>/jarvis/mcp.json.
func defaultMCPConfig() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "jarvis", "mcp.json"), nil
}

// startMCP starts the MCP servers of path (default mcp.json) and keeps the
// service told of their tools. A configuration error is logged and shown
// in the MCP panel; Jarvis runs without those servers. protected is the
// one list of Jarvis's own files (app.ToolRunnerOptions.ProtectedPaths),
// which no server's sandbox can reach.
func startMCP(ctx context.Context, l *launch, path, base, token string, protected []string) (*mcp.Manager, error) {
	var err error
	if path == "" {
		if path, err = defaultMCPConfig(); err != nil {
			return nil, err
		}
	}
	log := l.log
	store := secrets.New(l.getenv, secrets.WithFile(secretsFile(l), l.log))
	ok, err := approved.Open(l.dataDir)
	if err != nil {
		return nil, err
	}
	// Every stdio server runs in the sandbox of run_command's programs,
	// with the same protected folders (app.MCPSandbox).
	m, err := mcp.New(mcp.Options{ConfigPath: path, StatePath: filepath.Join(l.dataDir, "mcp-state.json"), Logger: log,
		Secret: store.Get, SetSecret: store.Set, Approved: ok, Roots: []string{l.workspace},
		Confine: app.MCPSandbox(confineHelper(log), protected)})
	if err != nil {
		return nil, err
	}
	if err := m.Start(); err != nil {
		log.Error("mcp: the config was not applied", "err", err)
	}
	go app.SyncMCPCatalog(ctx, api.NewClient(base, token, &http.Client{}), m, log, 0)
	return m, nil
}

// runMCPCommand is `jarvis mcp import [--from claude|cursor|FILE] [--mcp-config FILE]`:
// copies the MCP servers of Claude Desktop's or Cursor's config into mcp.json.
//
// The other subcommands (list, approve, enable, disable, secret set) are
// app.MCPCommand's.
func runMCPCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) (int, error) {
	if len(args) == 0 || args[0] != "import" {
		var opts []secrets.Option
		if p, err := defaultMCPConfig(); err == nil { // the fallback file beside config.json, as the window's
			opts = append(opts, secrets.WithFile(filepath.Join(filepath.Dir(p), "secrets.json"), nil))
		}
		return app.MCPCommand(args, app.MCPCommandOptions{
			DefaultDataDir:   func() (string, error) { return service.DefaultDataDir(getenv) },
			DefaultMCPConfig: defaultMCPConfig,
			SetSecret:        secrets.New(getenv, opts...).Set,
			Stdin:            os.Stdin, Stdout: stdout, Stderr: stderr,
		}), nil
	}
	fs := flag.NewFlagSet("jarvis mcp import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "claude", "claude, cursor, or the path of a config file with an mcpServers object")
	dst := fs.String("mcp-config", "", "the mcp.json to import into (default: <user config dir>/jarvis/mcp.json)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2, err
	}
	src := *from
	if known, err := mcp.ImportSources(); err == nil {
		if p, ok := known[src]; ok {
			src = p
		}
	}
	if *dst == "" {
		p, err := defaultMCPConfig()
		if err != nil {
			return 1, err
		}
		*dst = p
	}
	added, skipped, err := mcp.Import(*dst, src)
	if err != nil {
		return 1, err
	}
	for _, n := range skipped {
		fmt.Fprintf(stdout, "kept %s: %s already has a server by that name\n", n, *dst)
	}
	fmt.Fprintf(stdout, "imported %d server(s) from %s into %s\n", len(added), src, *dst)
	return 0, nil
}
