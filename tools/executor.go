package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"jarvis/internal/childenv"
)

// Errors returned by Execute, wrapped with detail; test with errors.Is.
var (
	ErrUnknownTool      = errors.New("unknown tool")
	ErrBadArguments     = errors.New("bad arguments")
	ErrOutsideWorkspace = errors.New("path is outside the workspace")
	ErrNotAllowed       = errors.New("not allowed")
	ErrUnsupported      = errors.New("not supported on this system")
	ErrTimeout          = errors.New("timed out")
)

// Options configures an Executor. Zero values take the documented defaults.
type Options struct {
	// Workspace is the folder the file tools are confined to. Required; it
	// must exist.
	Workspace string
	// Protected are Jarvis's own files and folders, which the file tools
	// refuse even when the workspace contains them (say the home folder):
	// its config folder, data dir, audit key folder, trash and checkpoint
	// store. They are held by identity (Protected, protected.go).
	Protected []string
	// Hide reports a workspace path (forward slashes) search_files leaves
	// out of its results: one the policy would not let a read reach
	// without asking, such as a credential store's (gate.Gate.Hides). Nil
	// hides nothing.
	Hide func(rel string) bool
	// Timeout bounds run_command and the helper programs (clipboard,
	// notifications). Default 30s.
	Timeout time.Duration
	// LaunchWait is how long a launcher (xdg-open, open, …) is given to fail
	// before the launch counts as done. Default 5s.
	LaunchWait time.Duration
	// OutputCap caps, in bytes, what read_file, clipboard_read and each of
	// run_command's stdout and stderr return. Default 64 KiB.
	OutputCap int
	// MaxWriteBytes caps write_file's content and the size of a file
	// edit_file changes. Default 1 MiB.
	MaxWriteBytes int
	// ConfineHelper is the argv prefix of the process that confines
	// run_command's program with Landlock and seccomp and execs it
	// (confine.go): the jarvis binary and its hidden subcommand, replaced
	// by the small jarvis-confine next to it when it is there
	// (SmallHelper). Empty: neither applies, and the prompt says so.
	ConfineHelper []string
	// NoBubblewrap starts programs without bubblewrap even where it works
	// (tests of the degraded sandbox); by default it is used when
	// Bubblewrap finds it.
	NoBubblewrap bool
	// TrashDir is where delete_path moves what it deletes (Jarvis's trash
	// in the data dir); empty: delete_path refuses.
	TrashDir string
	// MaxEntries caps list_dir and search_files. Default 1000.
	MaxEntries int
	// Env is run_command's environment. Nil means the desktop's own minus
	// variables whose names look secret (…TOKEN…, …SECRET…, …PASSWORD…,
	// …_KEY…, …CREDENTIAL…), so a program cannot hand the model an API
	// key by printing its environment.
	Env []string

	// GOOS selects the platform's helper programs. Default runtime.GOOS;
	// tests set it to check another platform's argv.
	GOOS string
	// LookPath finds helper programs and run_command's. Default exec.LookPath;
	// tests point it at scripted fakes.
	LookPath func(file string) (string, error)
	// Getenv reads WAYLAND_DISPLAY and the XDG_* folders. Default os.Getenv.
	Getenv func(key string) string
}

// Executor runs the OS tools. It is safe for concurrent use.
type Executor struct {
	opts      Options
	ws        *workspace
	bwrap     string   // bubblewrap's path; "" without it
	protected []string // Options.Protected, absolute, symlinks evaluated
}

// NewExecutor validates opts, fills defaults and opens the workspace.
func NewExecutor(opts Options) (*Executor, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.LaunchWait <= 0 {
		opts.LaunchWait = 5 * time.Second
	}
	opts.ConfineHelper = SmallHelper(opts.ConfineHelper)
	if opts.OutputCap <= 0 {
		opts.OutputCap = 64 << 10
	}
	if opts.MaxWriteBytes <= 0 {
		opts.MaxWriteBytes = 1 << 20
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 1000
	}
	if opts.GOOS == "" {
		opts.GOOS = runtime.GOOS
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	if opts.Getenv == nil {
		opts.Getenv = osGetenv
	}
	if opts.Env == nil {
		opts.Env = childenv.Scrub(os.Environ(), childenv.AllCredentials)
	}
	ws, err := openWorkspace(opts.Workspace, opts.Protected)
	if err != nil {
		return nil, err
	}
	x := &Executor{opts: opts, ws: ws}
	for _, p := range opts.Protected {
		if rp, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(rp); err == nil {
				rp = r
			}
			x.protected = append(x.protected, rp)
		}
	}
	if !opts.NoBubblewrap {
		x.bwrap, _ = Bubblewrap()
	}
	return x, nil
}

// Close releases the workspace handle.
func (e *Executor) Close() error { return errors.Join(e.ws.root.Close(), e.ws.protected.Close()) }

// Protected is the set of Jarvis's own files and folders the file tools
// refuse (Options.Protected), for a sandbox that keeps programs out of it.
func (e *Executor) Protected() *Protected { return e.ws.protected }

// Workspace returns the absolute workspace folder, symlinks evaluated.
func (e *Executor) Workspace() string { return e.ws.real }

// Execute runs tool name with its JSON arguments and returns the text
// handed back to the model. Errors wrap the sentinels above.
func (e *Executor) Execute(ctx context.Context, name string, args json.RawMessage) (string, error) {
	p, err := e.Prepare(name, args)
	if err != nil {
		return "", err
	}
	return p.Run(ctx)
}

// Assessment is the executor's argument-aware view of a call, before
// anything runs: what the gate combines with the default risk and the policy.
type Assessment struct {
	// Risk is at least the tool's default risk: Forbidden when the call
	// could not run (unknown tool, bad arguments, a path outside the
	// workspace, a non-http(s) URL, a command line given as a program).
	Risk Risk
	// Reason explains a raised risk or adds a warning; empty otherwise.
	Reason string
	// Destructive marks calls that delete data (rm, find -delete, …).
	Destructive bool
	// Canonical is the call's one canonical form (see canonical.go): exact
	// argument names, paths clean and workspace-relative with symlinks
	// resolved. It is what policy rules match, what the prompt shows, what
	// the audit records and what Execute is handed. Nil when the call is
	// refused.
	Canonical json.RawMessage
	// AlwaysAsk: the call prompts whatever the policy allows (a shell's
	// command line, sh -c '…'); only a deny rule decides it without a
	// prompt, and no grant is offered.
	AlwaysAsk bool
	// Sandbox is how a program the call starts runs (Sandbox.Describe);
	// empty for a call that starts none.
	Sandbox string
}

// Assess classifies a call from its arguments without running it. It runs
// the same validation as Execute, so what Assess accepts is what Execute
// would attempt.
func (e *Executor) Assess(name string, args json.RawMessage) Assessment {
	def, ok := Lookup(name)
	if !ok {
		return Assessment{Risk: Forbidden, Reason: fmt.Sprintf("%v %q", ErrUnknownTool, name)}
	}
	c, err := e.prepare(name, args)
	if err != nil {
		return Assessment{Risk: Forbidden, Reason: err.Error()}
	}
	canon, err := canonicalJSON(c.canon)
	if err != nil {
		return Assessment{Risk: Forbidden, Reason: err.Error()}
	}
	a := Assessment{Risk: def.Risk, Reason: c.note, Destructive: c.destructive, Canonical: canon, AlwaysAsk: c.alwaysAsk, Sandbox: c.sandbox}
	if c.destructive {
		a.Risk = Max(a.Risk, Risky)
	}
	return a
}

// call is a validated tool call ready to run.
type call struct {
	run         func(ctx context.Context) (string, error)
	note        string
	destructive bool
	canon       map[string]any // the canonical arguments (canonical.go)
	alwaysAsk   bool           // Assessment.AlwaysAsk
	sandbox     string         // Assessment.Sandbox
	// touches are the workspace-relative paths the call changes, in
	// order (Changes); empty for a call that changes no file.
	touches []string
}

func (e *Executor) prepare(name string, args json.RawMessage) (*call, error) {
	switch name {
	case "open_app":
		return e.prepareOpenApp(args)
	case "open_url":
		return e.prepareOpenURL(args)
	case "open_path":
		return e.prepareOpenPath(args)
	case "list_dir":
		return e.prepareListDir(args)
	case "read_file":
		return e.prepareReadFile(args)
	case "write_file":
		return e.prepareWriteFile(args)
	case "edit_file":
		return e.prepareEditFile(args)
	case "make_dir":
		return e.prepareMakeDir(args)
	case "move_path":
		return e.prepareMovePath(args)
	case "delete_path":
		return e.prepareDeletePath(args)
	case "search_files":
		return e.prepareSearchFiles(args)
	case "clipboard_read":
		return e.prepareClipboardRead(args)
	case "clipboard_write":
		return e.prepareClipboardWrite(args)
	case "notify":
		return e.prepareNotify(args)
	case "run_command":
		return e.prepareRunCommand(args)
	case "agents_message":
		return e.prepareAgentsMessage(args)
	case "round_table":
		return e.prepareRoundTable(args)
	case "schedule_task":
		return e.prepareScheduleTask(args)
	case AgentPermissionTool:
		return e.prepareAgentPermission(args)
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
}

func required(field string, v *string) (string, error) {
	if v == nil {
		return "", fmt.Errorf("%w: %q is required", ErrBadArguments, field)
	}
	return *v, nil
}

// capBuffer keeps the first max bytes written to it and counts the rest.
// Each instance has one writer goroutine (os/exec copies stdout and stderr
// separately), so it needs no lock.
type capBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (c *capBuffer) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capBuffer) String() string  { return c.buf.String() }
func (c *capBuffer) truncated() bool { return c.dropped > 0 }
