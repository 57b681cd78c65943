package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/checkpoint"
	"jarvis/app/gate"
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
	// MCPProgress receives the progress notifications of MCP calls.
	MCPProgress func(sessionID string, p mcp.Progress)
	// ConfineHelper starts run_command's programs confined (tools.Options).
	ConfineHelper []string
	// NoBubblewrap: the sandbox without bubblewrap (tools.Options; tests).
	NoBubblewrap bool
	// DataDir holds the checkpoints of changed files and Jarvis's trash
	// (undo.go). Default: the audit log's folder.
	DataDir string
	// Retention caps the checkpoints and the trash (default 1 GiB, 30 days).
	Retention checkpoint.Retention
}

// ProtectedFolders are the folders the file tools never touch, and that
// every program Jarvis starts (run_command, MCP servers: tools.Sandbox)
// can neither write nor read, even in a workspace that contains them: the
// folders of the audit log and the policy, the data dir, the audit chain's
// key folder.
func ProtectedFolders(auditPath, policyPath, dataDir string) []string {
	var protected []string
	for _, p := range []string{auditPath, policyPath} {
		if p != "" {
			protected = append(protected, filepath.Dir(p))
		}
	}
	if dir, err := audit.DefaultKeyDir(); err == nil {
		protected = append(protected, dir)
	}
	if dataDir != "" {
		protected = append(protected, dataDir)
	}
	return protected
}

// Runner is the desktop's ToolRunner: the safety gate (package gate, the
// final authority), the executor (package tools) and the audit log.
type Runner struct {
	x       *tools.Executor
	log     *audit.Log
	gate    *gate.Gate
	prompts *gate.Prompter
	logger  *slog.Logger
	mcp     *mcp.Manager
	mcpProg func(sessionID string, p mcp.Progress)
	cps     *checkpoint.Store
	keep    checkpoint.Retention
	dataDir string
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
	// the files 0600.
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
	protected := ProtectedFolders(opts.AuditPath, opts.PolicyPath, opts.DataDir)
	x, err := tools.NewExecutor(tools.Options{Workspace: opts.Workspace, Protected: protected,
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
	var pol gate.Policy
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
	var asker gate.Asker = pr
	if opts.Headless {
		asker = gate.NoOneToAsk
	}
	var assessor gate.Assessor = x
	var lookup func(string) (tools.Definition, bool)
	if opts.MCP != nil {
		assessor, lookup = mcpAssessor{x: x, m: opts.MCP}, opts.MCP.Definition
	}
	g, err := gate.New(gate.Options{Policy: pol, Assessor: assessor, Prompter: asker, Audit: lg, SavePolicy: save, Logger: opts.Logger, Lookup: lookup,
		CurrentFile: x.CurrentFile, Workspace: x.Workspace()})
	if err != nil {
		x.Close()
		cps.Close()
		lg.Close()
		return nil, err
	}
	return &Runner{x: x, log: lg, gate: g, prompts: pr, logger: opts.Logger, mcp: opts.MCP, mcpProg: opts.MCPProgress, cps: cps, keep: opts.Retention.Defaults(), dataDir: opts.DataDir}, nil
}

// Close denies every open prompt and closes the executor and the audit log.
func (r *Runner) Close() error {
	r.prompts.Close()
	return errors.Join(r.x.Close(), r.log.Close(), r.cps.Close())
}

// Sandbox is how run_command's programs run here, without network
// (tools.Executor.Sandbox), for the Permissions page.
func (r *Runner) Sandbox() tools.Sandbox { return r.x.Sandbox(nil, false) }

// Audit returns the audit log.
func (r *Runner) Audit() *audit.Log { return r.log }

// Workspace returns the folder the file tools are confined to.
func (r *Runner) Workspace() string { return r.x.Workspace() }

// Prompts returns the queue of permission prompts the window answers.
func (r *Runner) Prompts() *gate.Prompter { return r.prompts }

// Run implements ToolRunner: the gate decides (prompting when it must),
// runs the call when allowed, and records it.
func (r *Runner) Run(ctx context.Context, sessionID string, call api.ToolCall) ToolDecision {
	// The gate records a call after it ran: with a log that cannot take
	// the row (it no longer matches its head anchor), nothing runs.
	if err := r.log.Check(); err != nil {
		return ToolDecision{Class: string(tools.Forbidden), DecidedBy: audit.ByError, Decision: audit.Denied,
			Reason: "the audit log cannot record it", Error: err.Error()}
	}
	out := r.gate.Handle(ctx, gate.Request{ID: call.ID, SessionID: sessionID, Name: call.Name, Arguments: call.Arguments,
		ProposedRisk: tools.Risk(call.Risk), Reason: call.Reason, Target: call.Target, DelegatedBy: call.DelegatedBy}, r.exec(sessionID, call))
	d := ToolDecision{Arguments: out.Arguments, Class: string(out.Decision.Class), DecidedBy: out.DecidedBy,
		Reason: out.Decision.Reason, OK: out.OK, Result: out.Result, Error: out.Error, DurationMS: out.Duration.Milliseconds()}
	d.Edited = out.Edited
	d.Decision = audit.Denied
	switch {
	case out.Withdrawn:
		d.Decision = audit.Withdrawn
	case out.Decision.Action == gate.Run:
		d.Decision = audit.Allowed
	}
	return d
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
