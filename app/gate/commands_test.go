package gate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"jarvis/app/audit"
)

// TestDefaultCommands: with no rule, the read-only set runs with no
// prompt when its arguments stay in the working folder; anything else
// prompts.
func TestDefaultCommands(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	for args, want := range map[string]Verdict{
		`{"program":"git","args":["status"]}`:                      Run,
		`{"program":"git","args":["status","--short"]}`:            Run,
		`{"program":"git","args":["diff","src/main.go"]}`:          Run,
		`{"program":"ls","args":["-la","src"]}`:                    Run,
		`{"program":"pwd"}`:                                        Run,
		`{"program":"rg","args":["TODO","src"]}`:                   Run,
		`{"program":"git","args":["push"]}`:                        AskUser,
		`{"program":"git","args":["status"],"network":true}`:       AskUser,
		`{"program":"git","args":["diff","--output=x.patch"]}`:     AskUser,
		`{"program":"git","args":["-c","core.pager=sh","status"]}`: AskUser,
		`{"program":"cat","args":["/etc/passwd"]}`:                 AskUser,
		`{"program":"cat","args":[".env"]}`:                        AskUser,
		`{"program":"cat","args":["src/../../x"]}`:                 AskUser,
		`{"program":"cat","args":["~/.ssh/id_rsa"]}`:               AskUser,
		`{"program":"grep","args":["-rn","key","."]}`:              AskUser,
		`{"program":"rg","args":["--pre","sh","x"]}`:               AskUser,
		`{"program":"rg","args":["--hidden","x"]}`:                 AskUser,
		`{"program":"pwd","args":["-P"]}`:                          AskUser,
		`{"program":"/usr/bin/git","args":["status"]}`:             AskUser,
		`{"program":"python3","args":["-c","print(1)"]}`:           AskUser,
	} {
		d := f.gate.Classify(req("run_command", args, ""))
		if d.Action != want {
			t.Errorf("%s: %s (%s), want %s", args, d.Action, d.Reason, want)
		}
		if want == Run && !strings.Contains(d.Reason, "default read-only set") {
			t.Errorf("%s: reason %q does not say why it runs", args, d.Reason)
		}
	}
}

// TestCommandRules: rules by program and argument prefix, scoped to a
// workspace, with or without the network; deny beats allow.
func TestCommandRules(t *testing.T) {
	ws := ""
	f := newFixture(t, Policy{}, PrompterOptions{})
	ws = f.x.Workspace()
	rules := []Rule{
		{Tool: "run_command", Command: "npm run *", Workspace: ws, Action: Allow},
		{Tool: "run_command", Command: "go test ./...", Action: Allow},
		{Tool: "run_command", Command: "make *", Workspace: "/elsewhere", Action: Allow},
		{Tool: "run_command", Command: "curl *", Network: true, Action: Allow},
		{Tool: "run_command", Command: "git push *", Action: Deny},
		{Tool: "run_command", Command: "git *", Action: Allow},
		{Tool: "run_command", Command: "sh *", Action: Allow},
	}
	if err := f.gate.SetPolicy(Policy{Rules: rules}); err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]Verdict{
		`{"program":"npm","args":["run","build"]}`:                         Run,
		`{"program":"npm","args":["run"]}`:                                 Run,
		`{"program":"npm","args":["install"]}`:                             AskUser,
		`{"program":"npm","args":["run","build"],"network":true}`:          AskUser, // the rule gives no network
		`{"program":"go","args":["test","./..."]}`:                         Run,
		`{"program":"go","args":["test","./...","-run","X"]}`:              AskUser, // no "*": exactly that
		`{"program":"make","args":["all"]}`:                                AskUser, // another workspace's rule
		`{"program":"curl","args":["https://example.com"],"network":true}`: Run,
		`{"program":"git","args":["push","origin"]}`:                       Forbid,
		`{"program":"git","args":["commit","-m","x"]}`:                     Run,
		`{"program":"sh","args":["-c","ls | wc -l"]}`:                      AskUser, // a shell line always asks
	} {
		d := f.gate.Classify(req("run_command", args, ""))
		if d.Action != want {
			t.Errorf("%s: %s (%s), want %s", args, d.Action, d.Reason, want)
		}
	}
	for _, bad := range []Rule{
		{Tool: "read_file", Command: "ls", Action: Allow},
		{Tool: "run_command", Command: "ls 'x", Action: Allow},
		{Tool: "run_command", Command: "ls", Workspace: "relative", Action: Allow},
		{Tool: "read_file", Network: true, Action: Allow},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// TestShellLineAlwaysPrompts: sh -c '…' prompts even under an allow rule,
// shows the whole line and offers only once or deny; a deny rule denies it
// without a prompt.
func TestShellLineAlwaysPrompts(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "run_command", Command: "sh *", Action: Allow}}}, PrompterOptions{})
	ch := f.handle(context.Background(), req("run_command", `{"program":"sh","args":["-c","curl x | sh"]}`, ""))
	p := f.waitPending(1)[0]
	if !reflect.DeepEqual(p.Choices, []Choice{Once, Refuse}) || !strings.Contains(p.Reason, "always asks: curl x | sh") {
		t.Fatalf("prompt %+v", p)
	}
	if p.Decisive[0].Value != `sh -c 'curl x | sh'` {
		t.Fatalf("decisive %+v", p.Decisive)
	}
	f.prompter.Answer(p.ID, Answer{Choice: Refuse})
	if o := wait(t, ch); o.OK {
		t.Fatalf("ran: %+v", o)
	}
	f.gate.SetPolicy(Policy{Rules: []Rule{{Tool: "run_command", Command: "sh *", Action: Deny}}})
	if d := f.gate.Classify(req("run_command", `{"program":"sh","args":["-c","ls"]}`, "")); d.Action != Forbid {
		t.Fatalf("deny rule: %+v", d)
	}
}

// TestAlwaysAllowCommandPrefix: "Always allow" on a command prompt offers
// the narrowest useful prefix first (npm run *), scoped to the workspace,
// the network only when the call had it; the saved rule then covers the
// same prefix with other arguments, and the prompt shows the network and
// the sandbox.
func TestAlwaysAllowCommandPrefix(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ws := f.x.Workspace()
	ch := f.handle(context.Background(), req("run_command", `{"program":"npm","args":["run","build"],"network":true}`, ""))
	p := f.waitPending(1)[0]
	want := []Rule{
		{Tool: "run_command", Command: "npm run *", Workspace: ws, Network: true, Action: Allow},
		{Tool: "run_command", Command: "npm run build", Workspace: ws, Network: true, Action: Allow},
		{Tool: "run_command", Command: "npm *", Workspace: ws, Network: true, Action: Allow},
	}
	var got []Rule
	for _, s := range p.Scopes {
		got = append(got, s.Rule)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scopes %+v", p.Scopes)
	}
	fields := map[string]string{}
	for _, fl := range p.Decisive {
		fields[fl.Name] = fl.Value
	}
	if fields["command"] != "npm run build" || !strings.HasPrefix(fields["network"], "allowed") || fields["sandbox"] == "" {
		t.Fatalf("decisive %+v", p.Decisive)
	}
	f.prompter.Answer(p.ID, Answer{Choice: Always})
	if o := wait(t, ch); !o.OK {
		t.Fatalf("%+v", o)
	}
	o := f.gate.Handle(context.Background(), req("run_command", `{"program":"npm","args":["run","test"],"network":true}`, ""), f.exec)
	if !o.OK || o.DecidedBy != audit.ByPolicy {
		t.Fatalf("the saved prefix rule: %+v", o)
	}
	if d := f.gate.Classify(req("run_command", `{"program":"npm","args":["install"]}`, "")); d.Action != AskUser {
		t.Fatalf("outside the prefix: %+v", d)
	}
}
