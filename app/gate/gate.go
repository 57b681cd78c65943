// Package gate is the desktop's safety gate, the final authority on every
// tool call the service requests. Handle is the one entry point: it
// classifies a call, prompts the user when needed, runs the call, and writes
// the audit log:
//
//	g, err := gate.New(gate.Options{Policy: p, Assessor: executor, Prompter: prompter, Audit: auditLog})
//	out := g.Handle(ctx, gate.Request{ID: call.ID, SessionID: sid, Name: call.Name,
//		Arguments: call.Arguments, ProposedRisk: tools.Risk(call.Risk), Reason: call.Reason}, executor.Execute)
//	// post {id: out.ID, ok: out.OK, result: out.Result, error: out.Error} to the service
//
// Decide is the same without running or recording, for a caller that does
// both itself; Classify is the decision before any prompt.
//
// Classification. A call's class is the highest of
//   - the tool's default risk (tools.Definitions),
//   - the executor's argument-aware assessment (tools.Executor.Assess):
//     forbidden for a path outside the workspace, a non-http(s) URL, a
//     program off the allowlist, an unknown tool or malformed arguments;
//     deletes are marked destructive,
//   - the risk the service proposed. That can only raise the class: nothing
//     a model writes turns risky into safe. An unknown proposed risk counts
//     as forbidden; an empty one is ignored.
//
// Canonical form. The executor decodes the arguments strictly (exact names;
// an unknown or repeated name makes the call forbidden) and returns the
// call's canonical form (paths clean, workspace-relative, symlinks
// resolved). Policy rules and session grants match that form, the prompt
// shows it, the audit row records it (the model's spelling, when different,
// in the reason) and exec is handed it: what was judged is what runs.
//
// Then the verdict: forbidden is denied, whatever the policy says. Otherwise
// the strongest matching policy rule decides (deny beats ask beats allow,
// regardless of order); with no rule, safe runs and risky prompts. A call
// that would prompt runs without one when the user chose "allow for this
// session" for a similar call earlier in the same session (same tool; same
// program for run_command, same app for open_app) — except destructive
// calls, which always prompt unless a policy rule allows them.
//
// Prompting fails closed: a timeout, a closed window, a cancelled context or
// any error denies. NoOneToAsk (a gate without a window) denies every call
// that would prompt, recorded as decided by "headless". A caller withdraws
// a call by cancelling its context with ErrWithdrawn (the service gave up on
// it): the prompt is taken down, nothing runs even if an answer raced the
// withdrawal, and the row says "withdrawn". An answer may edit the arguments; the edited call is
// classified again and denied if it is forbidden or matches a deny rule.
// "Always allow" appends an allow rule scoped to the call's target (the
// scope the user picked among Prompt.Scopes, scope.go) to the policy and
// hands the new policy to Options.SavePolicy. A prompt for a destructive call offers only
// once/deny; one raised by an ask rule offers no "always" (an allow rule
// could never outrank it).
//
// Concurrency: a Gate is safe for concurrent use; concurrent prompts queue
// in the Prompter. The policy and the session grants are guarded by one
// RWMutex, never held while prompting or executing.
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/tools"
)

// Assessor is the executor's argument-aware check; *tools.Executor is one.
type Assessor interface {
	Assess(name string, args json.RawMessage) tools.Assessment
}

// Asker asks the user; *Prompter is one, and AskFunc adapts a function. Any
// error is a denial; ErrPromptTimeout is recorded as a timeout. An answer with a choice the prompt did not offer counts as
// Once.
type Asker interface {
	Ask(ctx context.Context, p Prompt) (Answer, error)
}

// AskFunc adapts a function to Asker.
type AskFunc func(ctx context.Context, p Prompt) (Answer, error)

// Ask calls f.
func (f AskFunc) Ask(ctx context.Context, p Prompt) (Answer, error) { return f(ctx, p) }

// Recorder appends to the audit log; *audit.Log is one.
type Recorder interface {
	Append(ctx context.Context, e audit.Entry) (audit.Entry, error)
}

// ExecFunc runs a tool call; (*tools.Executor).Execute is one.
type ExecFunc func(ctx context.Context, name string, args json.RawMessage) (string, error)

// Request is one tool.request from the service.
type Request struct {
	ID           string          `json:"id"`
	SessionID    string          `json:"session_id,omitempty"` // the jarvis session it belongs to
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	ProposedRisk tools.Risk      `json:"risk,omitempty"`
	Reason       string          `json:"reason,omitempty"` // the model's, shown but never trusted
	// Target is where a service-run tool would send its data (the
	// service's description, for the prompt): agents_message, round_table.
	Target string `json:"target,omitempty"`
	// DelegatedBy is the agents whose agents_message calls started the turn
	// (the service's word): such a call never uses, nor gives, the
	// session's "allow for this session" grants, which the user gave to
	// their own conversation, not to an agent another agent steers.
	DelegatedBy []string `json:"delegated_by,omitempty"`
	// Untrusted is where the untrusted text in the model's context came
	// from (the service's word, api.ToolCall.Untrusted): an outbound call
	// then asks even where a rule allows it (taint.go).
	Untrusted []api.Source `json:"untrusted,omitempty"`
}

// Verdict is what the gate does with a call.
type Verdict string

const (
	Run     Verdict = "run"
	AskUser Verdict = "prompt"
	Forbid  Verdict = "deny"
)

// Decision is Classify's result.
type Decision struct {
	Class       tools.Risk `json:"class"`
	Action      Verdict    `json:"action"`
	Reason      string     `json:"reason"`
	Rule        *Rule      `json:"rule,omitempty"` // the policy rule that decided, if any
	DecidedBy   string     `json:"decided_by"`     // an audit.By* value: policy or session before a prompt; user, timeout or error after
	Destructive bool       `json:"destructive,omitempty"`
	// Canonical is the call's canonical form (tools.Assessment.Canonical):
	// what the policy matched, and what is prompted, run and audited. Nil
	// when the call is refused before it has one.
	Canonical json.RawMessage `json:"canonical,omitempty"`
	// Untrusted is the request's untrusted sources; Destination, for an
	// outbound call, where its data would go; Tainted, that it asks because
	// of both, where a rule or a grant would have run it (taint.go).
	Untrusted   []api.Source `json:"untrusted,omitempty"`
	Destination string       `json:"destination,omitempty"`
	Tainted     bool         `json:"tainted,omitempty"`
	// AlwaysAsk: a shell's command line, which prompts whatever allows it
	// (tools.Assessment.AlwaysAsk).
	AlwaysAsk bool `json:"always_ask,omitempty"`
	// Sandbox is how the program the call starts runs
	// (tools.Assessment.Sandbox).
	Sandbox string `json:"sandbox,omitempty"`
}

// Options configures a Gate.
type Options struct {
	Policy   Policy
	Assessor Assessor // required
	Prompter Asker    // asks for Handle, and for Decide without its own asker
	Audit    Recorder // required
	// SavePolicy persists the policy after "always allow" adds a rule.
	// Optional; its failure is logged and the rule still applies in memory.
	SavePolicy func(Policy) error
	Logger     *slog.Logger
	Now        func() time.Time
	// Lookup finds the definitions of tools beyond tools.Lookup's (the MCP
	// tools of app/mcp); nil: none.
	Lookup func(name string) (tools.Definition, bool)
	// CurrentFile reads a workspace file for a write_file prompt's diff;
	// nil: prompts show the new content alone.
	CurrentFile CurrentFile
	// Workspace is the folder the calls act in (absolute): command rules
	// scoped to another workspace do not apply, and "always allow" scopes
	// a command rule to it.
	Workspace string
}

// Gate classifies, prompts, executes and audits tool calls.
type Gate struct {
	assessor Assessor
	asker    Asker
	audit    Recorder
	save     func(Policy) error
	extra    func(name string) (tools.Definition, bool)
	current  CurrentFile
	ws       string
	log      *slog.Logger
	now      func() time.Time

	mu       sync.RWMutex
	policy   Policy
	sessions map[string][]Rule // session id → "allow for this session" grants
}

// New validates opts and returns a Gate.
func New(opts Options) (*Gate, error) {
	if opts.Assessor == nil || opts.Audit == nil {
		return nil, errors.New("gate: Assessor and Audit are required")
	}
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Gate{
		assessor: opts.Assessor, asker: opts.Prompter, audit: opts.Audit, save: opts.SavePolicy, extra: opts.Lookup, current: opts.CurrentFile, ws: opts.Workspace,
		log: opts.Logger, now: opts.Now, policy: opts.Policy.clone(), sessions: map[string][]Rule{},
	}, nil
}

// Policy returns a copy of the current policy.
func (g *Gate) Policy() Policy {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.policy.clone()
}

// SetPolicy replaces the policy (the settings screen edited it).
func (g *Gate) SetPolicy(p Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.policy = p.clone()
	return nil
}

// lookup is tools.Lookup, then Options.Lookup.
func (g *Gate) lookup(name string) (tools.Definition, bool) {
	if d, ok := tools.Lookup(name); ok {
		return d, true
	}
	if g.extra != nil {
		return g.extra(name)
	}
	return tools.Definition{}, false
}

// Grants returns a copy of the "allow for this session" grants, by session
// id (the Permissions page lists the current conversation's).
func (g *Gate) Grants() map[string][]Rule {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make(map[string][]Rule, len(g.sessions))
	for id, rules := range g.sessions {
		out[id] = Policy{Rules: rules}.clone().Rules
	}
	return out
}

// EndSession forgets the session's "allow for this session" grants.
func (g *Gate) EndSession(sessionID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sessions, sessionID)
}

// parseArgs accepts a JSON object; null or nothing is an empty one.
func parseArgs(raw json.RawMessage) (map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return nil, errors.New("arguments are not a JSON object")
	}
	return m, nil
}

// Classify decides what to do with req without prompting or running it.
func (g *Gate) Classify(req Request) Decision {
	d, _ := g.classify(req)
	return d
}

func (g *Gate) classify(req Request) (Decision, map[string]json.RawMessage) {
	deny := func(reason string) Decision {
		return Decision{Class: tools.Forbidden, Action: Forbid, Reason: reason, DecidedBy: audit.ByPolicy}
	}
	def, ok := g.lookup(req.Name)
	if !ok {
		return deny(fmt.Sprintf("unknown tool %q", req.Name)), nil
	}
	args, err := parseArgs(req.Arguments)
	if err != nil {
		return deny(err.Error()), nil
	}

	var reasons []string
	d := Decision{Class: def.Risk}
	a := g.assessor.Assess(req.Name, req.Arguments)
	d.Class = tools.Max(d.Class, a.Risk)
	d.Destructive, d.AlwaysAsk, d.Sandbox = a.Destructive, a.AlwaysAsk, a.Sandbox
	if a.Canonical != nil {
		// Rules and grants see the one canonical spelling of the call, never
		// the model's: "./config//.env", an absolute path or a symlink to it
		// all read as config/.env.
		canon, err := parseArgs(a.Canonical)
		if err != nil {
			return deny("the executor's canonical arguments are not a JSON object"), nil
		}
		args, d.Canonical = canon, a.Canonical
	}
	if a.Reason != "" {
		reasons = append(reasons, a.Reason)
	}
	switch p := req.ProposedRisk; {
	case p == "":
	case p != tools.Safe && p != tools.Risky && p != tools.Forbidden:
		d.Class = tools.Forbidden
		reasons = append(reasons, fmt.Sprintf("unknown proposed risk %q counts as forbidden", p))
	case p.Rank() > d.Class.Rank():
		d.Class = p
		reasons = append(reasons, "the service marked it "+string(p))
	}
	if len(reasons) == 0 {
		reasons = append(reasons, fmt.Sprintf("%s is %s", req.Name, d.Class))
	}
	d.Reason = strings.Join(reasons, "; ")
	d.DecidedBy = audit.ByPolicy

	if d.Class == tools.Forbidden {
		d.Action = Forbid
		return d, args
	}

	g.mu.RLock()
	defer g.mu.RUnlock()
	r := g.policy.match(req.Name, args, g.ws)
	if r == nil {
		if r = defaultCommand(req.Name, args); r != nil {
			d.Reason += "; in the default read-only set"
		}
	} else {
		d.Reason += "; policy rule: " + r.String()
		if r.Note != "" && r.Action != Allow {
			d.Reason = r.Note + "; " + d.Reason
		}
	}
	if r != nil {
		d.Rule = r
		switch r.Action {
		case Deny:
			d.Action = Forbid
		case Ask:
			d.Action = AskUser
		default:
			d.Action = Run
		}
	} else if d.Class == tools.Safe {
		d.Action = Run
	} else {
		d.Action = AskUser
	}
	if d.AlwaysAsk && d.Action != Forbid {
		d.Action = AskUser
		d.Reason += "; a shell's command line always asks"
		untrustedRule(req, def, args, &d)
		return d, args
	}
	if d.Action == AskUser && len(req.DelegatedBy) > 0 {
		d.Reason += "; asked by agent " + req.DelegatedBy[len(req.DelegatedBy)-1] + " (session grants do not cover a delegated turn)"
	} else if d.Action == AskUser && !d.Destructive {
		for _, grant := range g.sessions[req.SessionID] {
			if grant.matches(req.Name, args, g.ws) {
				d.Action, d.DecidedBy = Run, audit.BySession
				d.Reason += "; allowed for this session"
				break
			}
		}
	}
	untrustedRule(req, def, args, &d)
	return d, args
}

// grantRule is the allow rule that "allow for this session" and "always
// allow" store: the tool, narrowed to the program for run_command, to the
// app for open_app, to the agent for agents_message and to the server for
// an MCP server's request for a completion.
func grantRule(tool string, args map[string]json.RawMessage) Rule {
	r := Rule{Tool: escapeGlob(tool), Action: Allow}
	switch tool {
	case "run_command":
		// The program with any arguments, the network only if this call had it.
		r.Command, r.Network = ruleWord(argValue(args, "program"))+" *", callNetwork(args)
	case "open_app":
		r.Args = map[string]string{"app_id": escapeGlob(argValue(args, "app_id"))}
	case "agents_message":
		r.Args = map[string]string{"agentId": escapeGlob(argValue(args, "agentId"))}
	case "agent_permission":
		r.Args = map[string]string{"agent": escapeGlob(argValue(args, "agent")), "kind": escapeGlob(argValue(args, "kind"))}
	case "mcp_sampling":
		r.Args = map[string]string{"server": escapeGlob(argValue(args, "server"))}
	}
	return r
}

// Ruling is Decide's result: the decision after any prompt, and the
// arguments to run with.
type Ruling struct {
	Decision
	Allow     bool            `json:"allow"`
	Arguments json.RawMessage `json:"arguments"` // the canonical call, or the canonical form of the user's edit
	Edited    bool            `json:"edited,omitempty"`
	// Withdrawn: the service gave up on the call before it could run
	// (ctx cancelled with ErrWithdrawn); Allow is false.
	Withdrawn bool `json:"withdrawn,omitempty"`
	// Held: a task's call waiting in the Inbox when this process stopped
	// (ErrKept); Allow is false, and the decision given after the restart
	// is a row of its own.
	Held bool `json:"held,omitempty"`
	// UserReason is what the user wrote when they denied it (Answer.Why).
	UserReason string `json:"user_reason,omitempty"`
}

// Decide classifies req and, when the verdict is to prompt, asks the user
// through ask (nil: Options.Prompter), applying the answer: edits are
// classified again, "session" and "always" grants are stored. It runs
// nothing and records nothing; Handle does both. Every failure denies.
func (g *Gate) Decide(ctx context.Context, req Request, ask Asker) Ruling {
	d, args := g.classify(req)
	r := Ruling{Decision: d, Allow: d.Action == Run, Arguments: req.Arguments}
	if d.Canonical != nil {
		r.Arguments = d.Canonical
	}
	if d.Action != AskUser {
		return r
	}
	if ask == nil {
		ask = g.asker
	}
	r.Allow = g.prompt(ctx, req, args, ask, &r)
	return r
}

// withdrawn reports whether the caller withdrew the call (see ErrWithdrawn).
func withdrawn(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrWithdrawn) }

// Outcome is Handle's result. ID, OK, Result and Error are the service's
// ToolResult.
type Outcome struct {
	ID        string          `json:"id"`
	OK        bool            `json:"ok"`
	Result    string          `json:"result"`
	Error     string          `json:"error,omitempty"`
	Decision  Decision        `json:"decision"`   // after any prompt
	DecidedBy string          `json:"decided_by"` // = Decision.DecidedBy
	Arguments json.RawMessage `json:"arguments"`  // as executed: canonical (edited, if the user edited them)
	Edited    bool            `json:"edited,omitempty"`
	Withdrawn bool            `json:"withdrawn,omitempty"` // the service gave up on it; nothing ran
	Held      bool            `json:"held,omitempty"`      // kept in the Inbox when this process stopped; nothing ran
	// UserReason is what the user wrote when they denied it ("Tell the
	// agent why"); the service gives it to the model with the denial.
	UserReason string        `json:"user_reason,omitempty"`
	Duration   time.Duration `json:"duration"`
	AuditID    int64         `json:"audit_id,omitempty"`
	// AuditErr is set when the audit row could not be written.
	AuditErr error `json:"-"`
}

// Handle decides req (prompting through Options.Prompter when needed), runs
// it with exec when allowed, and records the outcome in the audit log. It
// never panics and never runs a call that was not allowed.
func (g *Gate) Handle(ctx context.Context, req Request, exec ExecFunc) Outcome {
	start := g.now()
	r := g.Decide(ctx, req, nil)
	if r.Allow && withdrawn(ctx) {
		// Allowed (by a rule, a grant or an answer), but the service has
		// stopped waiting: running it now would act for nobody.
		r.Allow, r.Withdrawn, r.Action, r.DecidedBy = false, true, Forbid, audit.ByService
		r.Reason += "; withdrawn: the service gave up on the call before it ran"
	}
	out := Outcome{ID: req.ID, Decision: r.Decision, DecidedBy: r.DecidedBy, Arguments: r.Arguments, Edited: r.Edited, UserReason: r.UserReason}
	entry := audit.Entry{
		SessionID: req.SessionID, ToolCallID: req.ID, Tool: req.Name, Arguments: req.Arguments,
		ProposedRisk: string(req.ProposedRisk), Class: string(r.Class), DecidedBy: r.DecidedBy, Reason: r.Reason,
	}
	if c := r.Decision.Canonical; c != nil && !r.Edited {
		// The row records the call that was judged and run; the model's
		// own spelling, when different, goes in the reason.
		entry.Arguments = c
	}
	if r.Edited {
		entry.EditedArguments = r.Arguments
	}
	if spelled := requestedAs(req.Arguments, entry.Arguments); spelled != "" {
		entry.Reason += "; requested as " + spelled
	}
	if r.UserReason != "" {
		// In the row, not in the error: the service gives the model the
		// reason once, from the result's user_reason.
		entry.Reason += "; the user said: " + r.UserReason
	}
	if r.Allow {
		entry.Decision = audit.Allowed
		rctx, slot := audit.WithCheckpointSlot(ctx)
		res, err := g.run(rctx, exec, req.Name, r.Arguments)
		entry.Checkpoint = slot.Ref() // the files' state before the call, when it changed files
		if err != nil {
			out.Error, entry.Error = err.Error(), err.Error()
		} else {
			out.OK, out.Result, entry.Result = true, res, res
		}
	} else if r.Withdrawn {
		entry.Decision, out.Withdrawn = audit.Withdrawn, true
		out.Error = "withdrawn: " + r.Reason
	} else if r.Held {
		entry.Decision, out.Held = audit.Held, true
		out.Error = "held: " + r.Reason
	} else {
		entry.Decision = audit.Denied
		out.Error = "denied: " + r.Reason
	}
	out.Duration = g.now().Sub(start)
	entry.DurationMS = out.Duration.Milliseconds()
	// The call has happened or been refused; record it even if the caller
	// has gone.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rec, err := g.audit.Append(actx, entry)
	if err != nil {
		out.AuditErr = err
		g.log.Error("audit append failed", "tool", req.Name, "tool_call_id", req.ID, "err", err)
	} else {
		out.AuditID = rec.ID
	}
	return out
}

// prompt asks the user and applies the answer to r, reporting whether to
// run.
func (g *Gate) prompt(ctx context.Context, req Request, args map[string]json.RawMessage, ask Asker, r *Ruling) bool {
	def, _ := g.lookup(req.Name)
	p := Prompt{
		ToolCallID: req.ID, SessionID: req.SessionID, Tool: req.Name, Title: def.Title, Description: def.Description,
		Arguments: r.Arguments, Risk: r.Class, Reason: r.Reason,
		ModelReason: req.Reason, Destructive: r.Destructive, Target: req.Target,
		Choices:   []Choice{Once, Session, Always, Refuse},
		Decisive:  decisive(req.Name, args, req.Target),
		Untrusted: api.SourceWords(r.Untrusted), Destination: r.Destination,
	}
	if r.Rule != nil && r.Rule.Action == Ask {
		p.Note = r.Rule.Note
	}
	if r.Sandbox != "" {
		p.Decisive = append(p.Decisive, Field{Name: "sandbox", Value: r.Sandbox})
	}
	if spelled := requestedAs(req.Arguments, r.Arguments); spelled != "" && json.Valid([]byte(spelled)) {
		p.Requested = json.RawMessage(spelled)
	}
	if req.Name == "write_file" && g.current != nil {
		p.Diff = writeDiff(g.current, args)
	}
	switch {
	case p.Destructive, r.AlwaysAsk, r.Tainted:
		// Neither a grant nor a plain rule would ever run it again (a
		// rule that holds with untrusted content is made on purpose, on
		// the Permissions page).
		p.Choices = []Choice{Once, Refuse}
	case r.Rule != nil && r.Rule.Action == Ask && len(req.DelegatedBy) > 0:
		p.Choices = []Choice{Once, Refuse}
	case r.Rule != nil && r.Rule.Action == Ask:
		// An allow rule could never outrank the ask rule that asked.
		p.Choices = []Choice{Once, Session, Refuse}
	case len(req.DelegatedBy) > 0:
		p.Choices = []Choice{Once, Always, Refuse}
	}
	if containsChoice(p.Choices, Always) {
		p.Scopes = alwaysScopes(req.Name, args, g.ws)
	}
	r.Action = Forbid
	ans, err := g.ask(ctx, ask, p)
	if err == nil && withdrawn(ctx) {
		err = ErrWithdrawn // answered, but too late: the call is gone
	}
	switch {
	case errors.Is(err, ErrWithdrawn):
		r.DecidedBy, r.Withdrawn = audit.ByService, true
		r.Reason += "; withdrawn: the service gave up on the call while the prompt was open"
		return false
	case errors.Is(err, ErrNoOneToAsk):
		r.DecidedBy = audit.ByHeadless
		r.Reason += "; it would prompt, and there is nobody to ask (headless): denied"
		return false
	case errors.Is(err, ErrKept):
		r.DecidedBy, r.Held = audit.ByService, true
		r.Reason += "; held: Jarvis stopped while it waited for approval in the Inbox, which keeps it; the decision given after the restart is a row of its own"
		return false
	case errors.Is(err, ErrExpired):
		r.DecidedBy = audit.ByExpired
		r.Reason += "; expired: it waited in the Inbox and nobody decided before the task's deadline"
		return false
	case errors.Is(err, ErrPromptTimeout):
		r.DecidedBy = audit.ByTimeout
		r.Reason += "; the prompt timed out"
		return false
	case err != nil:
		r.DecidedBy = audit.ByError
		r.Reason += "; " + err.Error()
		return false
	case ans.Choice == Refuse:
		r.DecidedBy = audit.ByUser
		r.Reason += "; denied by the user"
		r.UserReason = api.UserReason(ans.Why)
		return false
	case ans.Choice != Once && ans.Choice != Session && ans.Choice != Always:
		r.DecidedBy = audit.ByError
		r.Reason += fmt.Sprintf("; invalid answer %q", ans.Choice)
		return false
	}
	r.DecidedBy = audit.ByUser

	if len(ans.EditedArguments) > 0 && !bytes.Equal(ans.EditedArguments, p.Arguments) {
		// The user vouches for what they typed, but not past the hard
		// limits: forbidden and deny rules still hold.
		ed := req
		ed.Arguments = ans.EditedArguments
		d2, args2 := g.classify(ed)
		r.Arguments, r.Edited = ans.EditedArguments, true
		if d2.Canonical != nil {
			r.Arguments = d2.Canonical
		}
		r.Class = tools.Max(r.Class, d2.Class)
		if d2.Action == Forbid {
			r.Rule = d2.Rule
			r.Reason = "edited arguments: " + d2.Reason
			r.DecidedBy = audit.ByPolicy
			return false
		}
		args = args2
		r.Destructive = r.Destructive || d2.Destructive
	}
	r.Action = Run

	choice := ans.Choice
	if ((r.Destructive || r.AlwaysAsk) && choice != Once) || !containsChoice(p.Choices, choice) {
		choice = Once // deletes are never granted wholesale from a prompt
	}
	switch choice {
	case Session:
		g.mu.Lock()
		g.sessions[req.SessionID] = append(g.sessions[req.SessionID], grantRule(req.Name, args))
		g.mu.Unlock()
		r.Reason += "; allowed by the user for this session"
	case Always:
		// The scope the user saw and picked; after an edit, the same
		// choice over the edited call's target.
		scopes := p.Scopes
		if r.Edited {
			scopes = alwaysScopes(req.Name, args, g.ws)
		}
		rule := pickScope(scopes, ans.Scope)
		rule.Origin = &Origin{Kind: OriginPrompt, SessionID: req.SessionID, Chat: strings.TrimSpace(ans.Chat), At: g.now().UTC()}
		g.mu.Lock()
		g.policy.Rules = append(g.policy.Rules, rule)
		snapshot := g.policy.clone()
		g.mu.Unlock()
		r.Reason += "; always allowed by the user (rule " + rule.String() + ")"
		if g.save != nil {
			if err := g.save(snapshot); err != nil {
				g.log.Error("saving the policy failed", "rule", rule.String(), "err", err)
			}
		}
	default:
		r.Reason += "; allowed once by the user"
	}
	return true
}

// ask calls the asker, turning a missing asker or a panic into an error.
func (g *Gate) ask(ctx context.Context, ask Asker, p Prompt) (a Answer, err error) {
	defer func() {
		if v := recover(); v != nil {
			g.log.Error("prompt panicked", "tool", p.Tool, "panic", v)
			a, err = Answer{Choice: Refuse}, errors.New("gate: the prompt failed")
		}
	}()
	if ask == nil {
		return Answer{Choice: Refuse}, errors.New("gate: no way to ask the user")
	}
	return ask.Ask(ctx, p)
}

// run executes the call, turning a panic into an error.
func (g *Gate) run(ctx context.Context, exec ExecFunc, name string, args json.RawMessage) (res string, err error) {
	defer func() {
		if r := recover(); r != nil {
			g.log.Error("tool panicked", "tool", name, "panic", r)
			res, err = "", fmt.Errorf("%s: internal error", name)
		}
	}()
	if exec == nil {
		return "", errors.New("no executor")
	}
	return exec(ctx, name, args)
}

// requestedAs returns the request's arguments, compacted, when they say
// something else than the recorded ones (not merely in another order or
// spacing), for the audit's reason and the prompt.
func requestedAs(requested, recorded json.RawMessage) string {
	var a bytes.Buffer
	if json.Compact(&a, requested) != nil {
		return string(requested)
	}
	var x, y any
	if json.Unmarshal(requested, &x) == nil && json.Unmarshal(recorded, &y) == nil {
		bx, _ := json.Marshal(x)
		by, _ := json.Marshal(y)
		if bytes.Equal(bx, by) {
			return ""
		}
	}
	return a.String()
}

func containsChoice(cs []Choice, c Choice) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
