// Command jarvis-service runs the General Agent Service alone (no window):
// for scripts, tests and users who run agents without the desktop. It runs
// the scheduled tasks (tasks.json beside the config file, and the API's); a
// window or `jarvis --headless` attached with --service-url executes and
// approves their calls.
//
//	jarvis-service [--addr 127.0.0.1:8765] [--data-dir DIR] [--config FILE] [--trust-config] [--allow-non-loopback] [--log-level info]
//	jarvis-service config approve [--config FILE] [--data-dir DIR] [--yes]   (apply a config file changed outside Jarvis)
//	jarvis-service agent-check URL [--api-key KEY] [--json]   (a round-table agent's conformance)
//	jarvis-service __mcp-bridge   (hidden: started by an ACP agent, see service/acprt/bridge.go)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"jarvis/internal/approved"
	"jarvis/service"
	"jarvis/service/acprt"
	"jarvis/service/listener"
	"jarvis/service/secrets"
	"jarvis/tools"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == tools.ConfineSubcommand {
		// The sandbox's helper, where jarvis-confine is not installed
		// beside this binary (tools.SmallHelper).
		fmt.Fprintln(os.Stderr, "sandbox:", tools.ConfineMain(os.Args[2:]))
		os.Exit(126)
	}
	if len(os.Args) > 2 && os.Args[1] == "config" && os.Args[2] == "approve" {
		os.Exit(service.ApproveConfigCommand("jarvis-service", os.Args[3:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	if len(os.Args) > 1 && os.Args[1] == acprt.BridgeSubcommand { // the stdio MCP bridge an ACP agent starts
		if err := acprt.Bridge(context.Background(), os.Getenv, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "jarvis-service MCP bridge:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "agent-check" { // agentcheck.go
		os.Exit(agentCheck(os.Args[2:], os.Stdout, os.Stderr, os.Getenv))
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "jarvis-service:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("jarvis-service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8765", "listen address (loopback only; port 0 picks a free one)")
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir, e.g. $XDG_DATA_HOME/jarvis)")
	configPath := fs.String("config", "", "config file (default: <user config dir>/jarvis/config.json)")
	trustConfig := fs.Bool("trust-config", false, "apply the config file as it is, without asking for approval of changes made outside Jarvis (a file managed by scripts or a provisioning tool)")
	allowNonLoopback := fs.Bool("allow-non-loopback", false, "allow a non-loopback --addr (exposes the service to the network)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	runtime.GOMAXPROCS(schedulerThreads(runtime.GOMAXPROCS(0), getenv("GOMAXPROCS")))

	var err error
	if *dataDir == "" {
		if *dataDir, err = service.DefaultDataDir(getenv); err != nil {
			return err
		}
	}
	if *configPath == "" {
		if *configPath, err = service.DefaultConfigPath(); err != nil {
			return err
		}
	}
	// Content of the config file the user did not approve is not applied
	// (service/config_approval.go), unless they said they manage the file.
	var store *approved.Store
	if !*trustConfig {
		if err := os.MkdirAll(*dataDir, 0o700); err != nil {
			return err
		}
		if store, err = approved.Open(*dataDir); err != nil {
			return err
		}
	}
	cfg, warning, err := service.LoadConfig(*configPath, store)
	if err != nil {
		return err
	}
	if warning != "" {
		log.Warn("config file not approved; the configuration approved before is used", "config", *configPath, "detail", warning)
	}
	ln, err := listener.Listen(*addr, *allowNonLoopback)
	if err != nil {
		return err
	}
	token, err := service.LoadToken(*dataDir, getenv)
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	svc, err := service.New(ctx, service.Options{DataDir: *dataDir, Config: cfg, Token: token, Logger: log,
		Secrets: secrets.New(getenv, secrets.WithFile(filepath.Join(filepath.Dir(*configPath), "secrets.json"), log)), AllowNonLoopbackHost: *allowNonLoopback, ConfigPath: *configPath,
		Approved: store, ConfigWarning: warning,
		// Scheduled tasks run here: a window or `jarvis --headless` attached
		// with --service-url gets their calls, and approves them.
		RunTasks: true, TasksFile: filepath.Join(filepath.Dir(*configPath), "tasks.json"), TaskOwner: fmt.Sprintf("jarvis-service pid %d", os.Getpid()),
		MCPBridge: acprt.ThisBinarysBridge(log),
		// CLI coding agents run in Jarvis's sandbox, through this binary's
		// hidden subcommand (or jarvis-confine beside it).
		Sandbox: agentSandbox(log)})
	if err != nil {
		ln.Close()
		return err
	}
	srv := listener.NewHTTPServer(svc.Handler())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "jarvis-service listening on http://%s\n", ln.Addr())
	log.Info("service started", "addr", ln.Addr().String(), "data_dir", *dataDir, "config", *configPath, "agents", len(cfg.Agents), "gomaxprocs", runtime.GOMAXPROCS(0))
	// Reload the config when its file changes, and on SIGHUP; an invalid
	// file is logged and the running config kept.
	if err := svc.WatchConfig(ctx, *configPath); err != nil {
		log.Warn("config file not watched; reload it with SIGHUP", "err", err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				svc.ReloadConfig(*configPath)
			case <-ctx.Done():
				return
			}
		}
	}()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			svc.Close()
			return err
		}
	}
	// Stop accepting, end running turns (recorded as interrupted), flush.
	go listener.Shutdown(srv, 5*time.Second)
	err = svc.Close()
	listener.Shutdown(srv, 5*time.Second)
	return err
}

// schedulerThreads is how many threads the service's Go scheduler runs Go
// code on: one fewer than the runtime's default (the cores it may use), at
// least one, unless GOMAXPROCS is set, which is obeyed as it is. The
// service relays between two processes on the same machine, the client and
// the model server, and mostly waits on them: with every core its scheduler
// woke a second thread for each hand-off between goroutines, on the core
// one of them was about to need. On 2 cores, one thread cut 0.06 to 0.18 ms
// from a non-streamed turn, at the same relay throughput (bench/service
// measures the binary both ways in the same run).
func schedulerThreads(current int, env string) int {
	if env != "" {
		return current
	}
	return max(1, current-1)
}

// agentSandbox is the sandbox of the CLI coding agents: this binary's
// hidden subcommand is the helper (jarvis-confine when it is beside it);
// the service protects its data and config folders. Nil (unconfined, and
// the agents' status says so) when the binary cannot name itself.
func agentSandbox(log *slog.Logger) *tools.Sandbox {
	helper := tools.ThisBinarysHelper(log)
	if helper == nil {
		return nil
	}
	sb := tools.NewSandbox(helper, nil)
	return &sb
}
