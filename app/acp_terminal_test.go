package app

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/tools"
)

// TestHelperConfineACP is run_command's confinement helper when the test
// binary is started as one (CONFINE_HELPER=1), as the jarvis binary's
// hidden subcommand is.
func TestHelperConfineACP(t *testing.T) {
	if os.Getenv("CONFINE_HELPER") != "1" {
		t.Skip("helper process for TestACPTerminalThroughTheGate")
	}
	err := tools.ConfineMain(flag.Args())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(111)
}

// TestACPTerminalThroughTheGate: the scripted ACP agent's terminals are
// run_command calls the desktop's gate decides and audits like any other,
// with no configuration: a command of the default read-only set (pwd) runs
// with no prompt, inside the sandbox; a program no rule covers prompts,
// saying how it is sandboxed, runs when allowed and cannot write outside
// the workspace; a denial reaches the agent as a failed terminal; a
// program a deny rule names never starts. Each has its audit row.
func TestACPTerminalThroughTheGate(t *testing.T) {
	t.Setenv("CONFINE_HELPER", "1") // the helper finds it in run_command's environment (the desktop's own)
	d, chat := acpDesktop(t, func(o *ToolRunnerOptions) {
		o.ConfineHelper = []string{os.Args[0], "-test.run=^TestHelperConfineACP$", "--"}
	})
	sub := filepath.Join(d.ws, "sub")
	os.Mkdir(sub, 0o700)

	if got, want := <-chat("term cwd="+sub+" pwd"), `exit=0 truncated=false released=true output="`+sub+`\n"`; got != want {
		t.Fatalf("pwd (default set, no prompt): the agent got %q, want %q", got, want)
	}

	outside := filepath.Join(t.TempDir(), "escaped.txt")
	reply := chat("term touch " + outside)
	p := d.waitPrompt(t)
	if p.Tool != "run_command" || !strings.Contains(p.Reason, "commands cannot be undone") || !strings.Contains(p.Reason, "sandboxed") {
		t.Fatalf("prompt %+v, want run_command saying how it is sandboxed", p)
	}
	var sandbox string
	for _, f := range p.Decisive {
		if f.Name == "sandbox" {
			sandbox = f.Value
		}
	}
	if sandbox == "" {
		t.Fatalf("the prompt does not show the sandbox: %+v", p.Decisive)
	}
	if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	got := <-reply
	if strings.HasPrefix(sandbox, "sandboxed") && !strings.Contains(sandbox, "NOT held") {
		if strings.HasPrefix(got, "exit=0") || !(strings.Contains(got, "Permission denied") || strings.Contains(got, "Read-only file system")) {
			t.Errorf("a write outside the workspace: the agent got %q", got)
		}
		if _, err := os.Stat(outside); !os.IsNotExist(err) {
			t.Fatalf("the agent's command wrote outside the workspace (%v)", err)
		}
	} else {
		t.Logf("not fully sandboxed here: %s", sandbox)
	}

	reply = chat("term false")
	p = d.waitPrompt(t)
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; !strings.HasPrefix(got, "terminal failed:") || !strings.Contains(got, "denied") {
		t.Fatalf("denied: the agent got %q", got)
	}

	made := filepath.Join(d.ws, "made.txt")
	if err := d.app.AddRule(gate.Rule{Tool: "run_command", Command: "touch *", Action: gate.Deny}); err != nil {
		t.Fatal(err)
	}
	if got := <-chat("term touch " + made); !strings.Contains(got, "denied") {
		t.Fatalf("a denied program: the agent got %q", got)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Fatalf("a denied program ran (%v)", err)
	}

	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, e := range es {
		if e.Tool == "run_command" {
			rows = append(rows, fmt.Sprintf("%s by %s: %s %s", e.Decision, e.DecidedBy, e.Arguments, e.Result))
		}
	}
	if len(rows) != 4 || !strings.Contains(rows[0], `"program":"pwd"`) || !strings.HasPrefix(rows[0], string(audit.Allowed)+" by "+string(audit.ByPolicy)) ||
		!strings.Contains(rows[0], `"sandbox":"sandboxed`) || !strings.Contains(rows[0], `"duration_ms":`) ||
		!strings.Contains(rows[1], `"program":"touch"`) || !strings.HasPrefix(rows[1], string(audit.Allowed)+" by "+string(audit.ByUser)) ||
		!strings.Contains(rows[2], `"program":"false"`) || !strings.HasPrefix(rows[2], string(audit.Denied)+" by "+string(audit.ByUser)) ||
		!strings.Contains(rows[3], `"program":"touch"`) || !strings.HasPrefix(rows[3], string(audit.Denied)+" by "+string(audit.ByPolicy)) {
		t.Errorf("run_command audit rows:\n%s", strings.Join(rows, "\n"))
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}
