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
// run_command calls the desktop's gate decides and audits like any other:
// an allowlisted command prompts, runs (through the confinement helper)
// when allowed and its output reaches the agent; a denial reaches the agent
// as a failed terminal; a program off the allowlist is refused without a
// prompt. Each has its audit row.
func TestACPTerminalThroughTheGate(t *testing.T) {
	t.Setenv("CONFINE_HELPER", "1") // the helper finds it in run_command's environment (the desktop's own)
	d, chat := acpDesktop(t, func(o *ToolRunnerOptions) {
		o.CommandAllowlist = []string{"pwd", "false", "touch"}
		o.ConfineHelper = []string{os.Args[0], "-test.run=^TestHelperConfineACP$", "--"}
	})
	sub := filepath.Join(d.ws, "sub")
	os.Mkdir(sub, 0o700)

	reply := chat("term cwd=" + sub + " pwd")
	p := d.waitPrompt(t)
	if p.Tool != "run_command" || !strings.Contains(p.Reason, "commands cannot be undone") || !strings.Contains(p.Reason, "onfine") {
		t.Fatalf("prompt %+v, want run_command saying how it is confined", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	if got, want := <-reply, `exit=0 truncated=false released=true output="`+sub+`\n"`; got != want {
		t.Fatalf("allowed: the agent got %q, want %q", got, want)
	}

	// Where the kernel has Landlock the command cannot write outside the
	// workspace (the prompt says which applies).
	if strings.Contains(p.Reason, "confined by Landlock") {
		outside := filepath.Join(t.TempDir(), "escaped.txt")
		reply = chat("term touch " + outside)
		p = d.waitPrompt(t)
		if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
			t.Fatal(err)
		}
		if got := <-reply; strings.HasPrefix(got, "exit=0") || !strings.Contains(got, "Permission denied") {
			t.Errorf("a write outside the workspace: the agent got %q", got)
		}
		if _, err := os.Stat(outside); !os.IsNotExist(err) {
			t.Fatalf("the agent's command wrote outside the workspace (%v)", err)
		}
	} else {
		t.Logf("not confined here: %s", p.Reason)
	}

	reply = chat("term false")
	p = d.waitPrompt(t)
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; !strings.HasPrefix(got, "terminal failed:") || !strings.Contains(got, "denied") {
		t.Fatalf("denied: the agent got %q", got)
	}

	if got := <-chat("term cat /etc/hostname"); !strings.Contains(got, "not on the command allowlist") {
		t.Fatalf("off the allowlist: the agent got %q", got)
	}

	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, e := range es {
		if e.Tool == "run_command" {
			rows = append(rows, fmt.Sprintf("%s by %s: %s", e.Decision, e.DecidedBy, e.Arguments))
		}
	}
	if len(rows) > 3 { // the Landlock check's row
		rows = append(rows[:1], rows[2:]...)
	}
	if len(rows) != 3 || !strings.Contains(rows[0], `"program":"pwd"`) || !strings.HasPrefix(rows[0], string(audit.Allowed)+" by "+string(audit.ByUser)) ||
		!strings.Contains(rows[1], `"program":"false"`) || !strings.HasPrefix(rows[1], string(audit.Denied)+" by "+string(audit.ByUser)) ||
		!strings.Contains(rows[2], `"program":"cat"`) || strings.HasPrefix(rows[2], string(audit.Allowed)) {
		t.Errorf("run_command audit rows:\n%s", strings.Join(rows, "\n"))
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}
