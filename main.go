// Command jarvis is the desktop app: a Wails v2 window that owns the
// conversation and every action on the user's computer. It starts the
// General Agent Service in-process on 127.0.0.1 (a random port, a token made
// for this launch) unless --service-url points it at a running one, and the
// window talks to the service only over its HTTP API (package app).
//
//	jarvis [--service-url http://127.0.0.1:8765] [--data-dir DIR] [--config FILE] [--workspace DIR] [--mcp-config FILE] [--version] [--headless]
//	jarvis help | undo | mcp | config approve | inbox | backup | restore | export   (the table of internal/cli)
//
// --headless runs the gate, executor and audit log with no window
// (app.RunHeadless): prompts are answered by the policy alone until SIGINT
// or SIGTERM; it runs the scheduled tasks (a task's call needing approval
// waits in the Inbox), and stops when a window asks for the data dir.
//
// With --service-url the token is JARVIS_TOKEN, else <data-dir>/token.
//
// This is the only package that imports Wails, and it holds only what must
// be here: this file, the embedded UI (assets_ui.go, or the empty page of
// the blankpage tag, assets_blank.go) and the seam of the e2e tag's
// self-test (e2e_on.go, e2e_off.go). Build with the tags
// desktop,production,webkit2_41 (see the Makefile).
package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
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
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"jarvis/api"
	"jarvis/app"
	"jarvis/app/mcp"
	"jarvis/internal/approved"
	"jarvis/internal/cli"
	"jarvis/internal/instance"
	"jarvis/internal/webkit"
	"jarvis/service"
	"jarvis/service/acprt"
	"jarvis/service/config"
	"jarvis/service/listener"
	"jarvis/service/secrets"
	"jarvis/tools"
)

func main() {
	if code, ok := cli.Run(os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}); ok {
		os.Exit(code) // jarvis undo, mcp, inbox, … (internal/cli)
	}
	code, err := run(os.Args[1:], os.Stderr, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jarvis:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// launch is what run decided from the flags and the environment, and what
// the e2e hooks may adjust before the service starts.
type launch struct {
	serviceURL string
	dataDir    string
	configPath string
	workspace  string
	config     *config.Config
	log        *slog.Logger
	getenv     func(string) string
	// headless: `jarvis --headless` (no window; gives way to one).
	headless bool
	// noDialogs makes audit exports go to the data dir instead of a native
	// save dialog (the e2e run has nobody to answer one).
	noDialogs bool
	// svc is the in-process service once it has started (nil with
	// --service-url): its redactor cleans tool results before the audit
	// log records them.
	svc atomic.Pointer[service.Service]
}

func run(args []string, stderr io.Writer, getenv func(string) string) (int, error) {
	started := time.Now()
	fs := flag.NewFlagSet("jarvis", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		cli.Usage(stderr)
		fmt.Fprintln(stderr, "\nThe window's flags:")
		fs.PrintDefaults()
	}
	serviceURL := fs.String("service-url", "", "use a running service at this URL instead of starting one (token: JARVIS_TOKEN or <data-dir>/token)")
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir, e.g. $XDG_DATA_HOME/jarvis)")
	configPath := fs.String("config", "", "service config file (default: <user config dir>/jarvis/config.json)")
	workspace := fs.String("workspace", "", "folder the file tools are confined to (default: <data-dir>/workspace)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	showVersion := fs.Bool("version", false, "print the version and commit, then exit")
	mcpConfig := fs.String("mcp-config", "", "MCP servers file (default: <user config dir>/jarvis/mcp.json)")
	headless := fs.Bool("headless", false, "no window: follow every session and answer tool calls by the policy alone (a call that would prompt is denied)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *showVersion {
		fmt.Println(versionLine())
		return 0, nil
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return 2, fmt.Errorf("--log-level: %w", err)
	}
	l := &launch{serviceURL: *serviceURL, dataDir: *dataDir, configPath: *configPath, workspace: *workspace,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})), getenv: getenv, headless: *headless}
	// WebKit's memory settings go first: they set C environment variables,
	// which is only safe before other threads (the service's SQLite, GTK) run.
	if webkit.Lean() {
		l.log.Debug("webkit: the UI process runs without OpenGL (JARVIS_WEBKIT_LEAN=0 restores it)")
	}
	var err error
	if l.dataDir == "" {
		if l.dataDir, err = service.DefaultDataDir(getenv); err != nil {
			return 1, err
		}
	}
	if err := os.MkdirAll(l.dataDir, 0o700); err != nil {
		return 1, err
	}
	if l.configPath == "" {
		if l.configPath, err = service.DefaultConfigPath(); err != nil {
			return 1, err
		}
	}
	lock, done, err := app.OneInstance(l.dataDir, l.headless, args, l.log) // one process per data dir
	if done {
		return 0, err
	}
	defer lock.Release()
	if l.workspace == "" {
		l.workspace = filepath.Join(l.dataDir, "workspace")
	}
	if err := os.MkdirAll(l.workspace, 0o700); err != nil {
		return 1, err
	}

	hooks, err := newHooks(l, started)
	if err != nil {
		return 1, err
	}
	defer hooks.Close()

	base, token, stopService, err := startService(l)
	if err != nil {
		return 1, err
	}
	defer stopService()
	hooks.Service(base, token)

	mcpCtx, stopMCP := context.WithCancel(context.Background())
	defer stopMCP()
	var windowEmit atomic.Pointer[func(string, any)] // the window's emit, once it exists
	ropts := app.ToolRunnerOptions{Workspace: l.workspace, AuditPath: filepath.Join(l.dataDir, "audit.db"), AuditKeyring: secrets.New(l.getenv),
		PolicyPath: filepath.Join(l.dataDir, "policy.json"), Logger: l.log, Headless: *headless, ConfineHelper: tools.ThisBinarysHelper(l.log),
		Service:     api.NewClient(base, token, &http.Client{}), // MCP servers' sampling, with the conversation's model
		ConfigFiles: []string{l.configPath, *mcpConfig, cli.SecretsFile(l.configPath)},
		Redact: func(text string) (string, bool) {
			if svc := l.svc.Load(); svc != nil {
				return svc.RedactSecrets(text)
			}
			return text, false
		},
		MCPProgress: func(sid string, p mcp.Progress) {
			if e := windowEmit.Load(); e != nil {
				(*e)("mcp:progress", p)
			}
		},
		CommandProgress: func(sid string, p app.CommandProgress) {
			if e := windowEmit.Load(); e != nil {
				(*e)(app.EventCommandProgress, p)
			}
		}}
	if *mcpConfig == "" {
		if *mcpConfig, err = cli.DefaultMCPConfig(); err != nil {
			return 1, err
		}
	}
	// Every stdio server runs in the sandbox of run_command's programs, with
	// the same protected folders (app.MCPSandbox).
	keys := secrets.New(l.getenv, secrets.WithFile(cli.SecretsFile(l.configPath), l.log))
	mcpm, err := app.StartMCP(mcpCtx, mcp.Options{ConfigPath: *mcpConfig, Logger: l.log, Secret: keys.Get, SetSecret: keys.Set,
		Roots: []string{l.workspace}, Confine: app.MCPSandbox(tools.ThisBinarysHelper(l.log), ropts.ProtectedPaths())}, l.dataDir, base, token)
	if err != nil {
		return 1, err
	}
	defer mcpm.Close()
	ropts.MCP = mcpm
	runner, err := app.NewToolRunner(ropts)
	if err != nil {
		return 1, err
	}
	defer runner.Close()
	// `jarvis undo` and `jarvis inbox allow|deny` run beside this process
	// are done here (app.ServeControl); a headless process gives way to a
	// window that asks for the data dir.
	headlessCtx, stopHeadless := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopHeadless()
	var yield func()
	if *headless {
		yield = stopHeadless
	}
	if srv, err := app.ServeControl(l.dataDir, runner, func(event string, data any) {
		if e := windowEmit.Load(); e != nil {
			(*e)(event, data)
		}
	}, yield, mcpm); err != nil {
		l.log.Warn("jarvis undo will not be handed to this process", "err", err)
	} else {
		defer srv.Close()
	}
	if *headless {
		return 0, app.RunHeadless(headlessCtx, app.HeadlessOptions{Client: api.NewClient(base, token, &http.Client{}),
			StreamClient: api.NewClient(base, token, app.NewStreamHTTPClient()), Tools: runner, Logger: l.log, Approvals: runner.Approvals()})
	}
	stopHeadless() // the window's own signal handling applies

	var wctx atomic.Pointer[context.Context]
	emit := func(event string, data any) {
		if c := wctx.Load(); c != nil {
			wruntime.EventsEmit(*c, event, data)
		}
	}
	windowEmit.Store(&emit)
	mcpPanel := app.NewMCPPanel(mcpm, emit)
	app.WithOpener(mcpPanel, runner.OpenPath) // the panel's "Open mcp.json"
	var saveFile func(string) (string, error)
	if !l.noDialogs {
		saveFile = func(name string) (string, error) {
			c := wctx.Load()
			if c == nil {
				return "", errors.New("the window is not ready")
			}
			// The dialog says what is exported: the audit log (.jsonl) or a
			// conversation (.md, .json).
			title, filter := "Export the audit log", wruntime.FileFilter{DisplayName: "JSON Lines (*.jsonl)", Pattern: "*.jsonl"}
			switch filepath.Ext(name) {
			case ".md":
				title, filter = "Export the conversation", wruntime.FileFilter{DisplayName: "Markdown (*.md)", Pattern: "*.md"}
			case ".json":
				title, filter = "Export the conversation", wruntime.FileFilter{DisplayName: "JSON (*.json)", Pattern: "*.json"}
			}
			return wruntime.SaveFileDialog(*c, wruntime.SaveDialogOptions{
				Title: title, DefaultFilename: name, CanCreateDirectories: true, Filters: []wruntime.FileFilter{filter},
			})
		}
	}
	a, err := app.New(app.Options{
		Client:       api.NewClient(base, token, &http.Client{}),
		StreamClient: api.NewClient(base, token, app.NewStreamHTTPClient()),
		Emit:         emit, Logger: l.log, Tools: runner, Prompts: runner.Prompts(),
		Audit: runner.Audit(), DataDir: l.dataDir, SaveFile: saveFile, About: aboutOptions(l),
		Approvals: runner.Approvals(), Unit: cli.Unit(l.dataDir, l.configPath, l.workspace), // Inbox and "Run tasks when Jarvis is closed"
	})
	if err != nil {
		return 1, err
	}
	defer app.Shutdown(a)
	hooks.Attach(runner)

	err = wails.Run(&options.App{
		Title:            "Jarvis",
		Width:            1180,
		Height:           780,
		MinWidth:         720,
		MinHeight:        480,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: &options.RGBA{R: 24, G: 24, B: 27, A: 255},
		OnStartup: func(ctx context.Context) {
			wctx.Store(&ctx)
			app.Start(a)
			go app.WatchMCP(mcpCtx, mcpPanel)
			hooks.Startup(ctx)
		},
		OnDomReady: hooks.DomReady,
		OnShutdown: func(context.Context) { app.Shutdown(a) },
		Bind:       append([]any{a, mcpPanel}, hooks.Bind()...),
		Linux:      &linux.Options{ProgramName: "jarvis", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
		// A second launch on this data dir hands over to this window.
		SingleInstanceLock: singleInstance(l, &wctx, emit),
	})
	if err != nil {
		return 1, err
	}
	return hooks.ExitCode(), nil
}

// startService starts the in-process service, or checks the one at
// --service-url, and returns its base URL and token.
func startService(l *launch) (base, token string, stop func(), err error) {
	if l.serviceURL != "" {
		if token, err = service.LoadToken(l.dataDir, l.getenv); err != nil {
			return "", "", nil, err
		}
		base = strings.TrimRight(l.serviceURL, "/")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := api.NewClient(base, token, nil).Health(ctx); err != nil {
			return "", "", nil, fmt.Errorf("--service-url %s: %w", base, err)
		}
		return base, token, func() {}, nil
	}
	cfgFile := "" // the first-run setup writes the config file only when it was read from it
	var store *approved.Store
	var warning string
	if l.config == nil {
		// Content of the config file the user did not approve is not
		// applied (service/config_approval.go; `jarvis config approve`).
		if store, err = approved.Open(l.dataDir); err != nil {
			return "", "", nil, err
		}
		if l.config, warning, err = service.LoadConfig(l.configPath, store); err != nil {
			return "", "", nil, err
		}
		if warning != "" {
			l.log.Warn("config file not approved; the configuration approved before is used", "config", l.configPath)
		}
		cfgFile = l.configPath
	}
	// A token made for this launch: nothing but this process knows it.
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", nil, err
	}
	token = hex.EncodeToString(raw[:])
	ln, err := listener.Listen("127.0.0.1:0", false)
	if err != nil {
		return "", "", nil, err
	}
	// The service opens its database while the window comes up: requests
	// that arrive before it is ready wait for it (or get its startup error).
	var (
		ready  = make(chan struct{})
		svc    *service.Service
		svcErr error
	)
	go func() {
		defer close(ready)
		svc, svcErr = service.New(context.Background(), service.Options{DataDir: l.dataDir, Config: l.config, Token: token,
			Logger: l.log, Secrets: secrets.New(l.getenv, secrets.WithFile(cli.SecretsFile(l.configPath), l.log)), ConfigPath: cfgFile, Window: true,
			// This process runs the scheduled tasks: it holds the data dir's lock.
			RunTasks: true, TasksFile: cli.TasksFile(l.configPath), TaskOwner: fmt.Sprintf("jarvis pid %d", os.Getpid()),
			Approved: store, ConfigWarning: warning, MCPBridge: acprt.ThisBinarysBridge(l.log),
			// CLI coding agents run in the sandbox of run_command's programs.
			Sandbox: app.AgentSandbox(tools.ThisBinarysHelper(l.log), l.dataDir)})
		if svcErr != nil {
			l.log.Error("the service failed to start", "err", svcErr)
		} else {
			l.log.Info("service started in-process", "addr", ln.Addr().String(), "data_dir", l.dataDir)
			l.svc.Store(svc)
		}
	}()
	srv := listener.NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
		case <-r.Context().Done():
			return
		}
		if svcErr != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(api.ErrorBody{Error: api.Error{Code: "service_failed",
				Message: "The agent service failed to start: " + svcErr.Error(), Details: map[string]any{}}})
			return
		}
		svc.Handler().ServeHTTP(w, r)
	}))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("service stopped", "err", err)
		}
	}()
	return "http://" + ln.Addr().String(), token, func() {
		<-ready
		go listener.Shutdown(srv, 3*time.Second) // stop accepting; open streams end with Close
		if svc != nil {
			svc.Close()
		}
		listener.Shutdown(srv, 3*time.Second)
	}, nil
}

// wailsJSON is the project file: its "info" names the product and version
// (the same values wails build writes into the macOS and Windows metadata).
//
//go:embed wails.json
var wailsJSON []byte

// commit is the source revision, set at build time with
// -ldflags "-X main.commit=<hash>" (make build and the documented wails build do).
var commit = "unknown"

// product returns the product name and version of wails.json.
func product() (name, version string) {
	var p struct {
		Info struct {
			ProductName    string `json:"productName"`
			ProductVersion string `json:"productVersion"`
		} `json:"info"`
	}
	if err := json.Unmarshal(wailsJSON, &p); err != nil || p.Info.ProductName == "" {
		return "Jarvis", "unknown"
	}
	return p.Info.ProductName, p.Info.ProductVersion
}

func versionLine() string {
	name, v := product()
	return fmt.Sprintf("%s %s (commit %s, %s, %s/%s)", name, v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// aboutOptions is what the About view shows; keys without an OS keyring go
// next to the config file.
func aboutOptions(l *launch) app.AboutOptions {
	name, v := product()
	o := app.AboutOptions{Product: name, Version: v, Commit: commit, DataDir: l.dataDir, ConfigPath: l.configPath,
		SecretsFile: cli.SecretsFile(l.configPath)}
	if runtime.GOOS == "linux" {
		if d, err := os.UserConfigDir(); err == nil {
			o.AutostartDir = filepath.Join(d, "autostart")
		}
		o.Executable, _ = os.Executable()
	}
	return o
}

// singleInstance is Wails' lock for the first instance's window: a second
// launch (app.OneInstance) reaches it and the window comes to the front.
func singleInstance(l *launch, wctx *atomic.Pointer[context.Context], emit func(string, any)) *options.SingleInstanceLock {
	return &options.SingleInstanceLock{UniqueId: instance.UniqueID(l.dataDir), OnSecondInstanceLaunch: func(d options.SecondInstanceData) {
		l.log.Info("a second launch handed over to this window", "args", d.Args, "working_directory", d.WorkingDirectory)
		if c := wctx.Load(); c != nil {
			wruntime.WindowUnminimise(*c)
			wruntime.WindowShow(*c)
		}
		emit("app:second-instance", map[string]any{"args": d.Args, "workingDirectory": d.WorkingDirectory})
	}}
}
