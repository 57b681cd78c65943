package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/checkpoint"
	"jarvis/app/gate"
	"jarvis/app/inbox"
	"jarvis/app/mcp"
	"jarvis/internal/fsperm"
	"jarvis/tools"
)

// ToolRunnerOptions configures NewToolRunner.
type ToolRunnerOptions struct {
	Workspace string // folder the file tools are confined to (required)
	AuditPath string // the audit log's SQLite file (required)
	// PolicyPath holds the gate's policy ("always allow" rules); empty keeps
	// the policy in memory only.
	PolicyPath string
	// AuditKeyring keeps the audit chain's key (the OS keyring); nil or
	// unavailable: a 0600 file beside the head anchor (audit.Options).
	AuditKeyring audit.KeyStore
	Logger       *slog.Logger
	Prompter     gate.PrompterOptions
	// Headless answers prompts by the policy alone: a call that would
	// prompt is denied (`jarvis --headless`, which has no window).
	Headless bool
	// MCP runs the tools of MCP servers (mcp__<server>__<tool>), judged by
	// the same gate (mcptools.go); nil: none.
	MCP *mcp.Manager
	// Service is the service's client: an MCP server's request for a
	// completion, once the gate allowed it, runs there with the
	// conversation's model (mcpsampling.go). Nil: such requests are declined.
	Service *api.Client
	// MCPProgress receives the progress notifications of MCP calls.
	MCPProgress func(sessionID string, p mcp.Progress)
	// CommandProgress receives a running command's output so far
	// (EventCommandProgress).
	CommandProgress func(sessionID string, p CommandProgress)
	// ConfineHelper starts run_command's programs confined (tools.Options).
	ConfineHelper []string
	// NoBubblewrap: the sandbox without bubblewrap (tools.Options; tests).
	NoBubblewrap bool
	// DataDir holds the checkpoints of changed files and Jarvis's trash
	// (undo.go). Default: the audit log's folder.
	DataDir string
	// Retention caps the checkpoints and the trash (default 1 GiB, 30 days).
	Retention checkpoint.Retention
	// Approvals holds the calls of scheduled tasks' runs that need your
	// approval, window or not (package inbox); nil: a queue of its own.
	Approvals *inbox.Approvals
	// ConfigDir is Jarvis's config folder (config.json, mcp.json,
	// secrets.json, the audit chain's key); default <user config dir>/jarvis.
	// ConfigFiles are config files kept elsewhere (--config, --mcp-config).
	// The file tools never touch either (ProtectedPaths).
	ConfigDir   string
	ConfigFiles []string
	// Redact replaces the secret values the service knows in a tool's
	// result and error before the audit log records them or the service
	// gets them (the window's in-process service: Service.RedactSecrets);
	// it reports whether it replaced any. Nil: the service redacts alone.
	Redact func(text string) (string, bool)
}

// ProtectedPaths is the one list of Jarvis's own files and folders, which
// the file tools refuse by identity (tools.Protected) and no program Jarvis
// starts may reach: the config folder and config files kept elsewhere, the
// data dir with its trash and checkpoint store, the folders of the audit
// log and the policy, and the audit chain's key folder.
func (o ToolRunnerOptions) ProtectedPaths() []string {
	var out []string
	cfg := o.ConfigDir
	if cfg == "" {
		if d, err := os.UserConfigDir(); err == nil {
			cfg = filepath.Join(d, "jarvis")
		}
	}
	out = append(out, cfg)
	out = append(out, o.ConfigFiles...)
	if dir, err := audit.DefaultKeyDir(); err == nil {
		out = append(out, dir)
	}
	for _, p := range []string{o.AuditPath, o.PolicyPath} {
		if p != "" {
			out = append(out, filepath.Dir(p))
		}
	}
	data := o.DataDir
	if data == "" && o.AuditPath != "" {
		data = filepath.Dir(o.AuditPath)
	}
	if data != "" {
		out = append(out, data, filepath.Join(data, TrashDir), filepath.Join(data, CheckpointDir))
	}
	return out
}

// Runner is the desktop's ToolRunner: the safety gate (package gate, the
// final authority), the executor (package tools) and the audit log.
type Runner struct {
	x         *tools.Executor
	log       *audit.Log
	gate      *gate.Gate
	prompts   *gate.Prompter
	logger    *slog.Logger
	mcp       *mcp.Manager
	mcpProg   func(sessionID string, p mcp.Progress)
	cmdProg   func(sessionID string, p CommandProgress)
	cps       *checkpoint.Store
	keep      checkpoint.Retention
	dataDir   string
	approvals *inbox.Approvals
	redact    func(string) (string, bool)
	svc       svc // the service, for MCP servers' sampling
	// stopWatch ends the watch of the policy file (policywatch.go).
	stopWatch func()
}

// NewToolRunner opens the executor's workspace, the audit log and the policy.
func NewToolRunner(opts ToolRunnerOptions) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DataDir == "" {
		opts.DataDir = filepath.Dir(opts.AuditPath)
	}
	// The folders of the audit log and the policy (the data dir) are 0700,
	// the files 0600; the file tools never touch them (ProtectedPaths).
	for _, p := range []string{opts.AuditPath, opts.PolicyPath} {
		if p == "" {
			continue
		}
		if err := errors.Join(fsperm.Dir(filepath.Dir(p)), fsperm.File(p, false)); err != nil {
			return nil, err
		}
	}
	if err := fsperm.File(opts.AuditPath, true); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if opts.DataDir == "" {
		opts.DataDir = filepath.Dir(opts.AuditPath)
	}
	// search_files leaves out what the policy would ask before reading
	// (credential stores); the gate is made after the executor it judges.
	var g *gate.Gate
	hide := func(rel string) bool { return g == nil || g.Hides(rel) }
	x, err := tools.NewExecutor(tools.Options{Workspace: opts.Workspace, Protected: opts.ProtectedPaths(), Hide: hide,
		TrashDir: filepath.Join(opts.DataDir, TrashDir), ConfineHelper: opts.ConfineHelper, NoBubblewrap: opts.NoBubblewrap})
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	cps, err := openCheckpoints(opts.DataDir, x.Workspace(), opts.Retention, opts.Logger)
	if err != nil {
		x.Close()
		return nil, err
	}
	lg, err := audit.Open(opts.AuditPath, audit.Options{Keyring: opts.AuditKeyring})
	if err != nil {
		x.Close()
		cps.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := fsperm.File(opts.AuditPath, false); err != nil { // the companion files SQLite made
		x.Close()
		cps.Close()
		lg.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	pol := gate.WithDefaults(gate.Policy{})
	var save func(gate.Policy) error
	if opts.PolicyPath != "" {
		if pol, err = gate.LoadPolicy(opts.PolicyPath); err != nil {
			x.Close()
			cps.Close()
			lg.Close()
			return nil, err
		}
		path := filepath.Clean(opts.PolicyPath)
		save = func(p gate.Policy) error { return gate.SavePolicy(path, p) }
	}
	pr := gate.NewPrompter(opts.Prompter)
	var base gate.Asker = pr
	if opts.Headless {
		base = gate.NoOneToAsk
	}
	if opts.Approvals == nil {
		opts.Approvals = inbox.NewApprovals(nil)
	}
	approvals := opts.Approvals
	// A call of a task's run waits in the Inbox, with or without a window;
	// a conversation's is prompted (or, headless, denied).
	asker := gate.AskFunc(func(ctx context.Context, p gate.Prompt) (gate.Answer, error) {
		if t := inbox.TaskOf(ctx); t != nil {
			return approvals.Ask(ctx, p, *t)
		}
		return base.Ask(ctx, p)
	})
	var assessor gate.Assessor = x
	var lookup func(string) (tools.Definition, bool)
	if opts.MCP != nil {
		assessor, lookup = mcpAssessor{x: x, m: opts.MCP}, mcpDefinition(opts.MCP)
	}
	g, err = gate.New(gate.Options{Policy: pol, Assessor: assessor, Prompter: asker, Audit: lg, SavePolicy: save, Logger: opts.Logger, Lookup: lookup,
		CurrentFile: x.CurrentFile, Workspace: x.Workspace()})
	if err != nil {
		x.Close()
		cps.Close()
		lg.Close()
		return nil, err
	}
	r := &Runner{x: x, log: lg, gate: g, prompts: pr, logger: opts.Logger, mcp: opts.MCP, mcpProg: opts.MCPProgress, cmdProg: opts.CommandProgress, cps: cps, keep: opts.Retention.Defaults(), dataDir: opts.DataDir,
		approvals: approvals, redact: opts.Redact, svc: svc{opts.Service}}
	if opts.MCP != nil && opts.Service != nil {
		opts.MCP.SetSample(r.sample) // mcpsampling.go
	}
	r.stopWatch = func() {}
	if opts.PolicyPath != "" {
		ctx, cancel := context.WithCancel(context.Background())
		r.stopWatch = cancel
		if err := watchPolicy(ctx, filepath.Clean(opts.PolicyPath), g, r.logger); err != nil {
			r.logger.Warn("policy: edits of the policy file apply at the next start", "err", err)
		}
	}
	return r, nil
}

// Close denies every open prompt and closes the executor and the audit log.
func (r *Runner) Close() error {
	r.stopWatch()
	r.prompts.Close()
	r.approvals.Close()
	return errors.Join(r.x.Close(), r.log.Close(), r.cps.Close())
}

// Sandbox is how run_command's programs run here, without network
// (tools.Executor.Sandbox), for the Permissions page.
func (r *Runner) Sandbox() tools.Sandbox { return r.x.Sandbox(nil, false) }

// Audit returns the audit log.
func (r *Runner) Audit() *audit.Log { return r.log }

// Workspace returns the folder the file tools are confined to.
func (r *Runner) Workspace() string { return r.x.Workspace() }

// Approvals returns the calls of tasks' runs waiting for your approval.
func (r *Runner) Approvals() *inbox.Approvals { return r.approvals }

// Prompts returns the queue of permission prompts the window answers.
func (r *Runner) Prompts() *gate.Prompter { return r.prompts }

// OpenPath opens an absolute path with the desktop's default handler, for
// the user's own clicks (the MCP panel's "Open mcp.json"), not a model's.
func (r *Runner) OpenPath(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.x.OpenPath(ctx, path)
}

// Run implements ToolRunner: the gate decides (prompting when it must),
// runs the call when allowed, and records it.
func (r *Runner) Run(ctx context.Context, sessionID string, call api.ToolCall) ToolDecision {
	// The gate records a call after it ran: with a log that cannot take
	// the row (it no longer matches its head anchor), nothing runs.
	if err := r.log.Check(); err != nil {
		return ToolDecision{Class: string(tools.Forbidden), DecidedBy: audit.ByError, Decision: audit.Denied,
			Reason: "the audit log cannot record it", Error: err.Error()}
	}
	if call.Task != nil {
		// A task's run: only the tools fixed when the task was created (the
		// service offers no other; this holds even if it did).
		if !slices.Contains(call.Task.Tools, call.Name) {
			return r.refuseForTask(ctx, sessionID, call)
		}
		ctx = inbox.WithTask(ctx, call.Task)
	}
	var media mcp.MediaSink
	exec, redacted := r.redacting(r.exec(sessionID, call, &media))
	out := r.gate.Handle(ctx, gate.Request{ID: call.ID, SessionID: sessionID, Name: call.Name, Arguments: call.Arguments,
		ProposedRisk: tools.Risk(call.Risk), Reason: call.Reason, Target: call.Target, DelegatedBy: call.DelegatedBy, Untrusted: call.Untrusted},
		exec)
	d := ToolDecision{Arguments: out.Arguments, Class: string(out.Decision.Class), DecidedBy: out.DecidedBy,
		Reason: out.Decision.Reason, OK: out.OK, Result: out.Result, Error: out.Error, DurationMS: out.Duration.Milliseconds(),
		Untrusted: call.Untrusted}
	if out.OK {
		d.Trust, d.Origin = r.resultTrust(call.Name, out.Arguments, out.Result)
		d.Media = media.Media
	}
	d.Edited, d.UserReason = out.Edited, out.UserReason
	d.Redacted = redacted.Load()
	d.Decision = audit.Denied
	switch {
	case out.Withdrawn:
		d.Decision = audit.Withdrawn
	case out.Held:
		d.Decision = audit.Held
	case out.Decision.Action == gate.Run:
		d.Decision = audit.Allowed
	}
	return d
}

// refuseForTask denies and records a call outside its task's tools.
func (r *Runner) refuseForTask(ctx context.Context, sessionID string, call api.ToolCall) ToolDecision {
	reason := fmt.Sprintf("not among the tools of task %q, fixed when it was created", call.Task.TaskName)
	e := audit.Entry{SessionID: sessionID, ToolCallID: call.ID, Tool: call.Name, Arguments: call.Arguments, ProposedRisk: call.Risk,
		Class: string(tools.Forbidden), Decision: audit.Denied, DecidedBy: audit.ByPolicy, Reason: reason}
	if _, err := r.log.Append(context.WithoutCancel(ctx), e); err != nil {
		r.logger.Error("audit append failed", "tool", call.Name, "tool_call_id", call.ID, "err", err)
	}
	return ToolDecision{Class: string(tools.Forbidden), Decision: audit.Denied, DecidedBy: audit.ByPolicy, Reason: reason, Error: "denied: " + reason}
}

// RecordUndelivered appends the row of a call that ran but whose result the
// service refused because it had already given up on the call: the audit
// shows that it ran and that its result reached nobody.
func (r *Runner) RecordUndelivered(ctx context.Context, sessionID string, call api.ToolCall, d ToolDecision) {
	if d.Decision != audit.Allowed {
		return // nothing ran; the decision row says so
	}
	e := audit.Entry{SessionID: sessionID, ToolCallID: call.ID, Tool: call.Name, Arguments: d.Arguments,
		ProposedRisk: call.Risk, Class: d.Class, Decision: audit.Withdrawn, DecidedBy: audit.ByService,
		Reason: "the service gave up on the call while it ran; its result was not delivered"}
	if _, err := r.log.Append(ctx, e); err != nil {
		r.logger.Error("audit append failed", "tool", call.Name, "tool_call_id", call.ID, "err", err)
	}
}

// RecordService appends the row of a tool the service ran itself without
// asking the gate, because it stays in the process (memory, a message to an
// in-process chat agent), or refused (out of the agent's scope): reported on
// the session's stream as a tool.result with source "service", recorded here
// in the same chain as the gate's own decisions. A tool.result with source
// "agent" is a tool a coding-agent CLI ran inside its own program: recorded
// as "ran inside the agent, not gated", decided by nobody here.
func (r *Runner) RecordService(ctx context.Context, sessionID string, res api.ToolResult) {
	name := res.Name
	if name == "" {
		name = "unknown"
	}
	e := audit.Entry{SessionID: sessionID, ToolCallID: res.ID, Tool: name, Arguments: res.Arguments,
		Class: string(tools.Safe), Decision: audit.Allowed, DecidedBy: audit.ByService,
		Reason: "ran in the service: it stays in the process", Result: res.Result}
	if res.Error != nil {
		e.Error = *res.Error
	}
	if res.Refused {
		e.Class, e.Decision, e.Reason = string(tools.Forbidden), audit.Denied, "refused by the service"
	}
	if res.Source == "agent" { // a coding-agent CLI's own tool: the record, not a decision
		e.Class, e.DecidedBy, e.Reason = "ungated", audit.ByAgent, "ran inside the agent, not gated"
	}
	if _, err := r.log.Append(ctx, e); err != nil {
		r.logger.Error("audit append failed", "tool", name, "tool_call_id", res.ID, "err", err)
	}
}

// redacting wraps exec so that the secret values the service knows are
// removed from its result and error before the gate records them in the
// audit log; the flag says whether any was.
func (r *Runner) redacting(exec gate.ExecFunc) (gate.ExecFunc, *atomic.Bool) {
	var did atomic.Bool
	if r.redact == nil {
		return exec, &did
	}
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		res, err := exec(ctx, name, args)
		if red, ok := r.redact(res); ok {
			res = red
			did.Store(true)
		}
		if err != nil {
			if m, ok := r.redact(err.Error()); ok {
				err = errors.New(m)
				did.Store(true)
			}
		}
		return res, err
	}, &did
}
