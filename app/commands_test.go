package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/tools"
)

// TestGitStatusWithNoConfiguration: a new user with no policy and no
// configuration asks for `git status` in a project: it runs with no prompt
// (headless: a prompt would have denied it), inside the sandbox, and the
// decision, the result and the audit row say how it ran, its exit code and
// duration. The workspace holds Jarvis's data dir (the home folder as the
// workspace): a command the user allows cannot write into it.
func TestGitStatusWithNoConfiguration(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("CONFINE_HELPER", "1")
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "jarvis")
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o700)
	if out, err := exec.Command(git, "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	var mu sync.Mutex
	var progress []CommandProgress
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: home, AuditPath: filepath.Join(data, "audit.db"), PolicyPath: filepath.Join(data, "policy.json"),
		Headless: true, ConfineHelper: []string{os.Args[0], "-test.run=^TestHelperConfineACP$", "--"},
		CommandProgress: func(_ string, p CommandProgress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.Run(context.Background(), "s1", api.ToolCall{ID: "c1", Name: "run_command", Arguments: json.RawMessage(`{"program":"git","args":["status"],"cwd":"proj"}`)})
	if !d.OK || d.DecidedBy != audit.ByPolicy || !strings.Contains(d.Reason, "default read-only set") {
		t.Fatalf("git status: %+v", d)
	}
	var res tools.CommandResult
	if err := json.Unmarshal([]byte(d.Result), &res); err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "No commits yet") || res.Sandbox == "" || res.Network {
		t.Fatalf("git status result %+v", res)
	}
	mu.Lock()
	if len(progress) == 0 || progress[0].Call != "c1" || progress[0].Bytes == 0 {
		t.Errorf("no progress while it ran: %+v", progress)
	}
	mu.Unlock()
	es, err := r.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 1 || !strings.Contains(es[0].Result, `"sandbox":"`+res.Sandbox) || !strings.Contains(es[0].Result, `"exit_code":0`) ||
		!strings.Contains(es[0].Reason, "sandboxed") {
		t.Fatalf("audit rows %+v %v", es, err)
	}
	if !r.Sandbox().Confined() {
		t.Logf("the sandbox is partial here: %s", r.Sandbox().Describe())
		return
	}
	// The data dir is out of reach even inside the workspace.
	before, _ := os.ReadFile(filepath.Join(data, "audit.db"))
	res = runAllowed(t, r, `{"program":"`+git+`","args":["-C","`+filepath.Join(".local", "share", "jarvis")+`","init","-q"]}`)
	after, _ := os.ReadFile(filepath.Join(data, "audit.db"))
	if _, err := os.Stat(filepath.Join(data, ".git")); !os.IsNotExist(err) || res.ExitCode == 0 || len(after) < len(before) {
		t.Fatalf("a command wrote into the data dir: %+v", res)
	}
}

// runAllowed runs a call the policy would prompt for by adding an allow
// rule for it first (the runner is headless: nobody to ask).
func runAllowed(t *testing.T, r *Runner, args string) tools.CommandResult {
	t.Helper()
	d := r.Run(context.Background(), "s1", api.ToolCall{ID: "c2", Name: "run_command", Arguments: json.RawMessage(args)})
	if d.OK || d.DecidedBy != audit.ByHeadless {
		t.Fatalf("an uncovered command did not prompt: %+v", d)
	}
	var a struct {
		Program string   `json:"program"`
		Args    []string `json:"args"`
	}
	json.Unmarshal([]byte(args), &a)
	if err := r.AddRule(gateRule(a.Program)); err != nil {
		t.Fatal(err)
	}
	d = r.Run(context.Background(), "s1", api.ToolCall{ID: "c3", Name: "run_command", Arguments: json.RawMessage(args)})
	if !d.OK {
		t.Fatalf("allowed command: %+v", d)
	}
	var res tools.CommandResult
	json.Unmarshal([]byte(d.Result), &res)
	return res
}

func gateRule(program string) gate.Rule {
	return gate.Rule{Tool: "run_command", Command: program + " *", Action: gate.Allow}
}
