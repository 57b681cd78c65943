package gate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/app/audit"
	"jarvis/tools"
)

type execCall struct {
	name string
	args string
}

type fixture struct {
	t        *testing.T
	ws       string
	x        *tools.Executor
	log      *audit.Log
	prompter *Prompter
	gate     *Gate

	mu    sync.Mutex
	saved []Policy
	calls []execCall
}

func newFixture(t *testing.T, p Policy, popts PrompterOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir()}
	var err error
	// A real executor judges the arguments; LookPath finds nothing, so it
	// can never start a program.
	f.x, err = tools.NewExecutor(tools.Options{
		Workspace: f.ws,
		LookPath:  func(string) (string, error) { return "", exec.ErrNotFound },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.x.Close() })
	f.log, err = audit.Open(filepath.Join(t.TempDir(), "audit.db"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.log.Close() })
	f.prompter = NewPrompter(popts)
	t.Cleanup(f.prompter.Close)
	f.gate, err = New(Options{
		Policy: p, Assessor: f.x, Prompter: f.prompter, Audit: f.log, Workspace: f.x.Workspace(),
		SavePolicy: func(p Policy) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.saved = append(f.saved, p)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// exec records the call instead of running it.
func (f *fixture) exec(ctx context.Context, name string, args json.RawMessage) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, execCall{name, string(args)})
	return "did " + name, nil
}

func (f *fixture) executed() []execCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]execCall(nil), f.calls...)
}

func (f *fixture) handle(ctx context.Context, req Request) <-chan Outcome {
	ch := make(chan Outcome, 1)
	go func() { ch <- f.gate.Handle(ctx, req, f.exec) }()
	return ch
}

// nextPrompt waits until n prompts are pending and returns them.
func (f *fixture) waitPending(n int) []Prompt {
	f.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		ch := f.prompter.Changed()
		if ps := f.prompter.Pending(); len(ps) >= n {
			return ps
		}
		select {
		case <-ch:
		case <-deadline:
			f.t.Fatalf("timed out waiting for %d prompts", n)
		}
	}
}

// answer waits for the oldest prompt and answers it.
func (f *fixture) answer(a Answer) Prompt {
	f.t.Helper()
	p := f.waitPending(1)[0]
	if err := f.prompter.Answer(p.ID, a); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func wait(t *testing.T, ch <-chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(5 * time.Second):
		t.Fatal("Handle did not return")
		return Outcome{}
	}
}

// lastAudit returns the newest audit row.
func (f *fixture) lastAudit() audit.Entry {
	f.t.Helper()
	es, err := f.log.List(context.Background(), audit.Filter{Newest: true, Limit: 1})
	if err != nil || len(es) != 1 {
		f.t.Fatalf("audit: %v %v", es, err)
	}
	return es[0]
}

func (f *fixture) verify(rows int) {
	f.t.Helper()
	rep, err := f.log.Verify(context.Background())
	if err != nil || !rep.OK || rep.Rows != rows {
		f.t.Fatalf("audit verify: %+v, %v", rep, err)
	}
}

func req(name, args string, risk tools.Risk) Request {
	return Request{ID: "call_" + name, SessionID: "j_1", Name: name, Arguments: json.RawMessage(args), ProposedRisk: risk, Reason: "the model wants it"}
}

func TestClassify(t *testing.T) {
	allowAll := Rule{Tool: "*", Action: Allow}
	tests := []struct {
		name   string
		rules  []Rule
		req    Request
		class  tools.Risk
		action Verdict
		reason string
		rule   Effect
	}{
		{"safe by default", nil, req("list_dir", `{}`, ""), tools.Safe, Run, "list_dir is safe", ""},
		{"risky by default", nil, req("write_file", `{"path":"a.txt","content":"x"}`, ""), tools.Risky, AskUser, "", ""},
		{"proposed safe cannot lower risky", nil, req("write_file", `{"path":"a.txt","content":"x"}`, tools.Safe), tools.Risky, AskUser, "", ""},
		{"proposed safe cannot lower run_command", nil, req("run_command", `{"program":"make"}`, tools.Safe), tools.Risky, AskUser, "", ""},
		{"proposed risky raises safe", nil, req("list_dir", `{}`, tools.Risky), tools.Risky, AskUser, "service marked it risky", ""},
		{"proposed forbidden raises", nil, req("notify", `{"title":"x"}`, tools.Forbidden), tools.Forbidden, Forbid, "marked it forbidden", ""},
		{"unknown proposed risk is forbidden", nil, req("list_dir", `{}`, "harmless"), tools.Forbidden, Forbid, "unknown proposed risk", ""},
		{"path outside the workspace", []Rule{allowAll}, req("read_file", `{"path":"../../etc/passwd"}`, tools.Safe), tools.Forbidden, Forbid, "outside the workspace", ""},
		{"absolute path outside", []Rule{allowAll}, req("list_dir", `{"path":"/etc"}`, ""), tools.Forbidden, Forbid, "outside the workspace", ""},
		{"non-http url", []Rule{allowAll}, req("open_url", `{"url":"file:///etc/passwd"}`, ""), tools.Forbidden, Forbid, "only http and https", ""},
		{"command line given as a program", []Rule{allowAll}, req("run_command", `{"program":"curl x | sh"}`, ""), tools.Forbidden, Forbid, "shell syntax runs only as sh -c", ""},
		{"unknown tool", []Rule{allowAll}, req("format_disk", `{}`, ""), tools.Forbidden, Forbid, "unknown tool", ""},
		{"arguments not an object", []Rule{allowAll}, req("list_dir", `[1]`, ""), tools.Forbidden, Forbid, "not a JSON object", ""},
		{"unknown argument", []Rule{allowAll}, req("list_dir", `{"path":"","recursive":true}`, ""), tools.Forbidden, Forbid, "unknown argument \"recursive\"", ""},
		{"delete prompts", nil, req("run_command", `{"program":"rm","args":["-rf","build"]}`, ""), tools.Risky, AskUser, "deletes", ""},
		{"allow rule runs risky", []Rule{{Tool: "write_file", Action: Allow}}, req("write_file", `{"path":"a","content":""}`, ""), tools.Risky, Run, "policy rule: allow write_file", Allow},
		{"allow rule for a delete", []Rule{{Tool: "run_command", Args: map[string]string{"program": "rm"}, Action: Allow}}, req("run_command", `{"program":"rm","args":["x"]}`, ""), tools.Risky, Run, "", Allow},
		{"deny beats allow", []Rule{allowAll, {Tool: "read_file", Args: map[string]string{"path": "*.env"}, Action: Deny}}, req("read_file", `{"path":"config/.env"}`, ""), tools.Safe, Forbid, "policy rule: deny read_file {path=*.env}", Deny},
		{"deny beats allow, reversed", []Rule{{Tool: "read_file", Args: map[string]string{"path": "*.env"}, Action: Deny}, allowAll}, req("read_file", `{"path":"config/.env"}`, ""), tools.Safe, Forbid, "", Deny},
		{"argument glob misses", []Rule{{Tool: "read_file", Args: map[string]string{"path": "*.env"}, Action: Deny}}, req("read_file", `{"path":"config/env.txt"}`, ""), tools.Safe, Run, "", ""},
		{"deny beats ask", []Rule{{Tool: "*", Action: Ask}, {Tool: "notify", Action: Deny}}, req("notify", `{"title":"x"}`, ""), tools.Safe, Forbid, "", Deny},
		{"ask beats allow", []Rule{allowAll, {Tool: "notify", Action: Ask}}, req("notify", `{"title":"x"}`, ""), tools.Safe, AskUser, "", Ask},
		{"ask on a safe tool", []Rule{{Tool: "list_dir", Args: map[string]string{"path": "private*"}, Action: Ask}}, req("list_dir", `{"path":"private/x"}`, ""), tools.Safe, AskUser, "", Ask},
		{"tool glob", []Rule{{Tool: "clipboard_*", Action: Deny}}, req("clipboard_write", `{"text":"x"}`, ""), tools.Risky, Forbid, "", Deny},
		{"array argument glob", []Rule{{Tool: "run_command", Args: map[string]string{"program": "git", "args": "status*"}, Action: Allow}}, req("run_command", `{"program":"git","args":["status","-s"]}`, ""), tools.Risky, Run, "", Allow},
		{"array argument glob misses", []Rule{{Tool: "run_command", Args: map[string]string{"program": "git", "args": "status*"}, Action: Allow}}, req("run_command", `{"program":"git","args":["push","--force"]}`, ""), tools.Risky, AskUser, "", ""},
		{"allow rule with a raised class", []Rule{{Tool: "list_dir", Action: Allow}}, req("list_dir", `{}`, tools.Risky), tools.Risky, Run, "", Allow},
		{"allow rule cannot run forbidden", []Rule{{Tool: "list_dir", Action: Allow}}, req("list_dir", `{}`, tools.Forbidden), tools.Forbidden, Forbid, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Policy{Rules: tc.rules}, PrompterOptions{})
			d := f.gate.Classify(tc.req)
			if d.Class != tc.class || d.Action != tc.action || !strings.Contains(d.Reason, tc.reason) {
				t.Fatalf("got %+v; want class %s action %s reason containing %q", d, tc.class, tc.action, tc.reason)
			}
			switch {
			case tc.rule == "" && d.Rule != nil:
				t.Fatalf("unexpected rule %s", d.Rule)
			case tc.rule != "" && (d.Rule == nil || d.Rule.Action != tc.rule):
				t.Fatalf("rule %v, want a %s rule", d.Rule, tc.rule)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	if _, err := New(Options{Prompter: f.prompter, Audit: f.log}); err == nil {
		t.Fatal("New without an assessor")
	}
	if _, err := New(Options{Assessor: f.x, Prompter: f.prompter}); err == nil {
		t.Fatal("New without an audit log")
	}
	if _, err := New(Options{Assessor: f.x, Prompter: f.prompter, Audit: f.log, Policy: Policy{Rules: []Rule{{Tool: "x"}}}}); err == nil {
		t.Fatal("New with an invalid policy")
	}
	if err := f.gate.SetPolicy(Policy{Rules: []Rule{{Tool: "x", Action: "allow-ish"}}}); err == nil {
		t.Fatal("SetPolicy accepted an invalid policy")
	}
}

func TestHandleRunsSafeAndDeniesForbidden(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	o := f.gate.Handle(ctx, req("list_dir", `{"path":"."}`, tools.Safe), f.exec)
	if !o.OK || o.Result != "did list_dir" || o.DecidedBy != audit.ByPolicy || o.AuditErr != nil {
		t.Fatalf("safe: %+v", o)
	}
	e := f.lastAudit()
	if e.Tool != "list_dir" || e.Decision != audit.Allowed || e.DecidedBy != audit.ByPolicy || e.Class != "safe" ||
		e.Result != "did list_dir" || e.ToolCallID != "call_list_dir" || e.SessionID != "j_1" || string(e.Arguments) != `{"path":"."}` || e.ID != o.AuditID {
		t.Fatalf("audit row %+v", e)
	}

	o = f.gate.Handle(ctx, req("read_file", `{"path":"/etc/shadow"}`, tools.Safe), f.exec)
	if o.OK || !strings.HasPrefix(o.Error, "denied: ") || o.Decision.Class != tools.Forbidden {
		t.Fatalf("forbidden: %+v", o)
	}
	e = f.lastAudit()
	if e.Decision != audit.Denied || e.DecidedBy != audit.ByPolicy || e.Class != "forbidden" || !strings.Contains(e.Reason, "outside") || e.ProposedRisk != "safe" {
		t.Fatalf("audit row %+v", e)
	}
	if calls := f.executed(); len(calls) != 1 {
		t.Fatalf("executed %v", calls)
	}
	if len(f.prompter.Pending()) != 0 {
		t.Fatal("prompted")
	}
	f.verify(2)
}

func TestHandlePromptAnswers(t *testing.T) {
	write := `{"content":"hello","path":"notes/a.txt"}` // canonical: names sorted
	tests := []struct {
		name    string
		answer  Answer
		ok      bool
		by      string
		args    string // executed, if ok
		reason  string
		auditEd string
	}{
		{"once", Answer{Choice: Once}, true, audit.ByUser, write, "allowed once", ""},
		{"deny", Answer{Choice: Refuse}, false, audit.ByUser, "", "denied by the user", ""},
		{"edited", Answer{Choice: Once, EditedArguments: json.RawMessage(`{"path":"./notes/b.txt","content":"bye"}`)}, true, audit.ByUser,
			`{"content":"bye","path":"notes/b.txt"}`, "allowed once", `{"content":"bye","path":"notes/b.txt"}`},
		{"edited outside the workspace", Answer{Choice: Once, EditedArguments: json.RawMessage(`{"path":"../../.bashrc","content":"x"}`)}, false, audit.ByPolicy,
			"", "edited arguments: ", `{"path":"../../.bashrc","content":"x"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Policy{Rules: []Rule{{Tool: "write_file", Args: map[string]string{"path": "*.bashrc"}, Action: Deny}}}, PrompterOptions{})
			r := req("write_file", write, tools.Safe)
			ch := f.handle(context.Background(), r)
			p := f.answer(tc.answer)
			if p.Tool != "write_file" || string(p.Arguments) != write || p.Risk != tools.Risky || p.ModelReason != "the model wants it" ||
				p.ToolCallID != r.ID || p.SessionID != "j_1" || p.Description == "" || p.Deadline.IsZero() ||
				!reflect.DeepEqual(p.Choices, []Choice{Once, Session, Always, Refuse}) {
				t.Fatalf("prompt %+v", p)
			}
			o := wait(t, ch)
			if o.OK != tc.ok || o.DecidedBy != tc.by || !strings.Contains(o.Decision.Reason, tc.reason) {
				t.Fatalf("outcome %+v", o)
			}
			calls := f.executed()
			if tc.ok && (len(calls) != 1 || calls[0].args != tc.args) {
				t.Fatalf("executed %v, want %s", calls, tc.args)
			}
			if !tc.ok && len(calls) != 0 {
				t.Fatalf("executed %v after a denial", calls)
			}
			e := f.lastAudit()
			wantDecision := audit.Denied
			if tc.ok {
				wantDecision = audit.Allowed
			}
			if e.Decision != wantDecision || e.DecidedBy != tc.by || string(e.Arguments) != write || string(e.EditedArguments) != tc.auditEd {
				t.Fatalf("audit row %+v", e)
			}
			f.verify(1)
		})
	}
}

func TestHandleFailsClosed(t *testing.T) {
	risky := req("open_url", `{"url":"https://example.com"}`, "")

	t.Run("timeout", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{Timeout: 50 * time.Millisecond})
		o := f.gate.Handle(context.Background(), risky, f.exec)
		if o.OK || o.DecidedBy != audit.ByTimeout || len(f.executed()) != 0 || len(f.prompter.Pending()) != 0 {
			t.Fatalf("outcome %+v", o)
		}
		if e := f.lastAudit(); e.Decision != audit.Denied || e.DecidedBy != audit.ByTimeout {
			t.Fatalf("audit %+v", e)
		}
	})
	t.Run("window closed", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{})
		ch := f.handle(context.Background(), risky)
		f.waitPending(1)
		f.prompter.Close()
		o := wait(t, ch)
		if o.OK || o.DecidedBy != audit.ByError || !strings.Contains(o.Decision.Reason, "closed") {
			t.Fatalf("outcome %+v", o)
		}
		// Later prompts are denied at once.
		o = f.gate.Handle(context.Background(), risky, f.exec)
		if o.OK || o.DecidedBy != audit.ByError || len(f.executed()) != 0 {
			t.Fatalf("after close: %+v", o)
		}
		f.verify(2)
	})
	t.Run("context cancelled", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		ch := f.handle(ctx, risky)
		f.waitPending(1)
		cancel()
		o := wait(t, ch)
		if o.OK || o.DecidedBy != audit.ByError || len(f.executed()) != 0 || len(f.prompter.Pending()) != 0 {
			t.Fatalf("outcome %+v", o)
		}
		// The audit row is written although the caller's context is gone.
		if e := f.lastAudit(); e.Decision != audit.Denied {
			t.Fatalf("audit %+v", e)
		}
	})
	t.Run("asker error", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{})
		g, err := New(Options{Assessor: f.x, Prompter: AskFunc(func(context.Context, Prompt) (Answer, error) {
			return Answer{Choice: Once}, errors.New("ui crashed")
		}), Audit: f.log})
		if err != nil {
			t.Fatal(err)
		}
		o := g.Handle(context.Background(), risky, f.exec)
		if o.OK || o.DecidedBy != audit.ByError || len(f.executed()) != 0 {
			t.Fatalf("outcome %+v", o)
		}
	})
	t.Run("invalid choice", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{})
		g, _ := New(Options{Assessor: f.x, Prompter: AskFunc(func(context.Context, Prompt) (Answer, error) {
			return Answer{Choice: "yes please"}, nil
		}), Audit: f.log})
		if o := g.Handle(context.Background(), risky, f.exec); o.OK || len(f.executed()) != 0 {
			t.Fatalf("outcome %+v", o)
		}
	})
	t.Run("executor error and panic", func(t *testing.T) {
		f := newFixture(t, Policy{}, PrompterOptions{})
		o := f.gate.Handle(context.Background(), req("notify", `{"title":"x"}`, ""), func(context.Context, string, json.RawMessage) (string, error) {
			return "", errors.New("notify-send: not found")
		})
		if o.OK || o.Error != "notify-send: not found" {
			t.Fatalf("error: %+v", o)
		}
		if e := f.lastAudit(); e.Decision != audit.Allowed || e.Error != "notify-send: not found" {
			t.Fatalf("audit %+v", e)
		}
		o = f.gate.Handle(context.Background(), req("notify", `{"title":"x"}`, ""), func(context.Context, string, json.RawMessage) (string, error) {
			panic("boom")
		})
		if o.OK || !strings.Contains(o.Error, "internal error") {
			t.Fatalf("panic: %+v", o)
		}
		f.verify(2)
	})
}

func TestSessionGrant(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	git := req("run_command", `{"program":"git","args":["commit"]}`, "")
	ch := f.handle(ctx, git)
	f.answer(Answer{Choice: Session})
	if o := wait(t, ch); !o.OK || o.DecidedBy != audit.ByUser {
		t.Fatalf("first: %+v", o)
	}
	// Same program, same session: no prompt.
	o := f.gate.Handle(ctx, req("run_command", `{"program":"git","args":["push"]}`, tools.Safe), f.exec)
	if !o.OK || o.DecidedBy != audit.BySession {
		t.Fatalf("granted: %+v", o)
	}
	if e := f.lastAudit(); e.DecidedBy != audit.BySession || e.Decision != audit.Allowed {
		t.Fatalf("audit %+v", e)
	}
	// Another program, another session, or after the session ended: prompt.
	for _, r := range []Request{
		req("run_command", `{"program":"make"}`, ""),
		{ID: "c2", SessionID: "j_2", Name: "run_command", Arguments: json.RawMessage(`{"program":"git"}`)},
	} {
		if d := f.gate.Classify(r); d.Action != AskUser {
			t.Fatalf("%s: %+v", r.Arguments, d)
		}
	}
	f.gate.EndSession("j_1")
	if d := f.gate.Classify(git); d.Action != AskUser {
		t.Fatalf("after EndSession: %+v", d)
	}
	// A session grant never covers deletes, and cannot be given for one.
	rm := req("run_command", `{"program":"rm","args":["x"]}`, "")
	ch = f.handle(ctx, rm)
	p := f.waitPending(1)[0]
	if !p.Destructive || !reflect.DeepEqual(p.Choices, []Choice{Once, Refuse}) {
		t.Fatalf("delete prompt %+v", p)
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Session}); !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("session for a delete: %v", err)
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Once}); err != nil {
		t.Fatal(err)
	}
	wait(t, ch)
	if d := f.gate.Classify(rm); d.Action != AskUser {
		t.Fatalf("second delete: %+v", d)
	}
	f.verify(3)
}

func TestAlwaysAllowStoresRule(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "notify", Action: Deny}}}, PrompterOptions{})
	ctx := context.Background()
	ch := f.handle(ctx, req("open_app", `{"app_id":"firefox"}`, ""))
	f.answer(Answer{Choice: Always})
	if o := wait(t, ch); !o.OK || o.DecidedBy != audit.ByUser {
		t.Fatalf("first: %+v", o)
	}
	want := Policy{Rules: []Rule{{Tool: "notify", Action: Deny}, {Tool: "open_app", Args: map[string]string{"app_id": "firefox"}, Action: Allow}}}
	plain := func(p Policy) Policy { // without the rules' origins (origin_test.go)
		for i := range p.Rules {
			p.Rules[i].Origin = nil
		}
		return p
	}
	if got := f.gate.Policy(); !reflect.DeepEqual(plain(got), want) {
		t.Fatalf("policy %+v", got)
	}
	f.mu.Lock()
	saved := f.saved
	f.mu.Unlock()
	if len(saved) != 1 || !reflect.DeepEqual(plain(saved[0]), want) {
		t.Fatalf("saved %+v", saved)
	}
	o := f.gate.Handle(ctx, req("open_app", `{"app_id":"firefox"}`, tools.Risky), f.exec)
	if !o.OK || o.DecidedBy != audit.ByPolicy || o.Decision.Rule == nil {
		t.Fatalf("second: %+v", o)
	}
	if d := f.gate.Classify(req("open_app", `{"app_id":"xterm"}`, "")); d.Action != AskUser {
		t.Fatalf("other app: %+v", d)
	}
	// Policy() is a copy.
	p := f.gate.Policy()
	p.Rules[1].Action = Deny
	if f.gate.Policy().Rules[1].Action != Allow {
		t.Fatal("Policy() shares its rules")
	}
	// A prompt raised by an ask rule offers no "always".
	f.gate.SetPolicy(Policy{Rules: []Rule{{Tool: "list_dir", Action: Ask}}})
	ch = f.handle(ctx, req("list_dir", `{}`, ""))
	if p := f.waitPending(1)[0]; !reflect.DeepEqual(p.Choices, []Choice{Once, Session, Refuse}) {
		t.Fatalf("ask-rule prompt %+v", p)
	}
	f.answer(Answer{Choice: Once})
	wait(t, ch)
}

func TestPromptQueue(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	var chans []<-chan Outcome
	for i, app := range []string{"a1", "a2", "a3"} {
		r := req("open_app", `{"app_id":"`+app+`"}`, "")
		r.ID = app
		chans = append(chans, f.handle(ctx, r))
		f.waitPending(i + 1) // enqueue in a known order
	}
	ps := f.prompter.Pending()
	if len(ps) != 3 || ps[0].ToolCallID != "a1" || ps[1].ToolCallID != "a2" || ps[2].ToolCallID != "a3" {
		t.Fatalf("queue %+v", ps)
	}
	// Answers may come in any order.
	if err := f.prompter.Answer(ps[2].ID, Answer{Choice: Once}); err != nil {
		t.Fatal(err)
	}
	if o := wait(t, chans[2]); !o.OK {
		t.Fatalf("a3: %+v", o)
	}
	if left := f.prompter.Pending(); len(left) != 2 || left[0].ID != ps[0].ID {
		t.Fatalf("left %+v", left)
	}
	if err := f.prompter.Answer(ps[2].ID, Answer{Choice: Once}); !errors.Is(err, ErrNoSuchPrompt) {
		t.Fatalf("answered twice: %v", err)
	}
	for _, bad := range []Answer{{Choice: "maybe"}, {Choice: Once, EditedArguments: json.RawMessage(`"x"`)}, {Choice: Once, EditedArguments: json.RawMessage(`{bad`)}} {
		if err := f.prompter.Answer(ps[0].ID, bad); !errors.Is(err, ErrBadAnswer) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if len(f.prompter.Pending()) != 2 {
		t.Fatal("a bad answer removed the prompt")
	}
	f.prompter.Answer(ps[0].ID, Answer{Choice: Refuse})
	f.prompter.Answer(ps[1].ID, Answer{Choice: Once})
	if o := wait(t, chans[0]); o.OK {
		t.Fatalf("a1: %+v", o)
	}
	if o := wait(t, chans[1]); !o.OK {
		t.Fatalf("a2: %+v", o)
	}
	calls := f.executed()
	if len(calls) != 2 {
		t.Fatalf("executed %v", calls)
	}
	f.verify(3)
}

// TestEndToEnd runs the real executor behind the gate.
func TestEndToEnd(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	ch := make(chan Outcome, 1)
	go func() {
		ch <- f.gate.Handle(ctx, req("write_file", `{"path":"out/hello.txt","content":"hi"}`, tools.Safe), f.x.Execute)
	}()
	f.answer(Answer{Choice: Once})
	if o := wait(t, ch); !o.OK || o.Result != "wrote 2 bytes to out/hello.txt" {
		t.Fatalf("write: %+v", o)
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "out", "hello.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("file: %q %v", b, err)
	}
	o := f.gate.Handle(ctx, req("read_file", `{"path":"out/hello.txt"}`, ""), f.x.Execute)
	if !o.OK || o.Result != "hi" {
		t.Fatalf("read: %+v", o)
	}
	f.verify(2)
}

// TestDecide covers the caller-driven path: a per-call asker, no execution,
// no audit row.
func TestDecide(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	g, err := New(Options{Assessor: f.x, Audit: f.log}) // no Prompter
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := req("write_file", `{"path":"a.txt","content":"x"}`, "")
	if ru := g.Decide(ctx, r, nil); ru.Allow || ru.DecidedBy != audit.ByError || ru.Action != Forbid {
		t.Fatalf("no asker: %+v", ru)
	}
	var asked []Prompt
	ask := AskFunc(func(_ context.Context, p Prompt) (Answer, error) {
		asked = append(asked, p)
		return Answer{Choice: Once, EditedArguments: json.RawMessage(`{"path":"b.txt","content":"y"}`)}, nil
	})
	ru := g.Decide(ctx, r, ask)
	if !ru.Allow || !ru.Edited || string(ru.Arguments) != `{"content":"y","path":"b.txt"}` || ru.DecidedBy != audit.ByUser || ru.Action != Run || len(asked) != 1 {
		t.Fatalf("decide: %+v", ru)
	}
	if ru := g.Decide(ctx, req("list_dir", `{}`, ""), ask); !ru.Allow || len(asked) != 1 {
		t.Fatalf("safe call prompted: %+v", ru)
	}
	timeout := AskFunc(func(context.Context, Prompt) (Answer, error) { return Answer{}, ErrPromptTimeout })
	if ru := g.Decide(ctx, r, timeout); ru.Allow || ru.DecidedBy != audit.ByTimeout {
		t.Fatalf("timeout: %+v", ru)
	}
	panicky := AskFunc(func(context.Context, Prompt) (Answer, error) { panic("ui") })
	if ru := g.Decide(ctx, r, panicky); ru.Allow || ru.DecidedBy != audit.ByError {
		t.Fatalf("panic: %+v", ru)
	}
	if len(f.executed()) != 0 {
		t.Fatal("Decide executed")
	}
	if es, _ := f.log.List(ctx, audit.Filter{}); len(es) != 0 {
		t.Fatalf("Decide recorded %d rows", len(es))
	}
}

// A turn that another agent started (agents_message into the session the
// user has open) is not the user's conversation: the user's "allow for this
// session" grant does not cover its calls, and its prompt cannot give one.
func TestSessionGrantsSkipDelegatedTurns(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	ch := f.handle(ctx, req("run_command", `{"program":"git","args":["commit"]}`, ""))
	f.answer(Answer{Choice: Session})
	if o := wait(t, ch); !o.OK {
		t.Fatalf("user's call: %+v", o)
	}
	own := req("run_command", `{"program":"git","args":["push"]}`, "")
	if d := f.gate.Classify(own); d.Action != Run {
		t.Fatalf("the user's own next call should be granted: %+v", d)
	}
	delegated := own
	delegated.ID, delegated.DelegatedBy = "call_delegated", []string{"general"}
	d := f.gate.Classify(delegated)
	if d.Action != AskUser || !strings.Contains(d.Reason, "asked by agent general") {
		t.Fatalf("a delegated call used the session grant: %+v", d)
	}
	ch = f.handle(ctx, delegated)
	p := f.waitPending(1)[0]
	if containsChoice(p.Choices, Session) {
		t.Fatalf("a delegated call's prompt offers a session grant: %+v", p.Choices)
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Session}); !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("session grant for a delegated call: %v", err)
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Refuse}); err != nil {
		t.Fatal(err)
	}
	if o := wait(t, ch); o.OK {
		t.Fatalf("refused call ran: %+v", o)
	}
}
