package app

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
)

// TestACPTerminalLoginFromTheWindow: an ACP agent whose sign-in is a login
// run in a terminal (the scripted agent offers its own binary's "login" as
// claude-code-acp offers its CLI's, through the "terminal-auth" _meta)
// refuses the turn until the user signs in. "Sign in" in the window
// (RunAgentLogin) opens a terminal the user sees (here a small real
// program in the terminal's place, which runs what follows its -e) running
// the login, waits for it to end and audits it: a login that fails is said
// in words and nothing is signed in; one that succeeds signs the agent in
// through the real service (authenticate), and the message sent again is
// answered.
func TestACPTerminalLoginFromTheWindow(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../service/acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	creds := filepath.Join(dir, "creds")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	d := newRealDesktopWith(t, 60, "", nil,
		`{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":"`+bin+`","workDir":"{{WS}}","env":{"SCRIPTED_AUTH":"terminal","SCRIPTED_DIR":"`+creds+`"}}}`)
	term := filepath.Join(dir, "terminal")
	if err := os.WriteFile(term, []byte("#!/bin/sh\n# a terminal: runs what follows its -e\nshift\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d.app.terminal = []string{term, "-e"}

	s, err := d.app.NewSession("coder")
	if err != nil {
		t.Fatal(err)
	}
	chat := func(text string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := d.c.Chat(ctx, s.SessionID, text)
		if err != nil {
			return "", err
		}
		return r.Assistant.Parts[0].Text, nil
	}
	var se *api.StatusError
	if _, err := chat("whoami"); !errors.As(err, &se) || se.Err.Code != "acp_auth_required" {
		t.Fatalf("before signing in: %v, want acp_auth_required", err)
	}
	ms, err := d.app.AgentSignIn("coder")
	if err != nil || len(ms.Methods) != 2 || ms.Methods[0].Kind != "terminal" || ms.Methods[0].Command != bin {
		t.Fatalf("methods %+v, %v", ms, err)
	}
	if _, err := d.app.RunAgentLogin("coder", "anthropic-api-key"); err == nil || !strings.Contains(err.Error(), "no sign-in run in a terminal") {
		t.Fatalf("a key method run in a terminal: %v", err)
	}

	// The login fails: said in words, audited, nothing signed in.
	if err := os.WriteFile(filepath.Join(creds, "refuse"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.RunAgentLogin("coder", "scripted-login"); err == nil || !strings.Contains(err.Error(), "ended with status 1: it did not sign you in") {
		t.Fatalf("a failed login: %v", err)
	}
	if e := lastAudit(t, d, "agent_sign_in"); e.Decision != audit.Allowed || e.DecidedBy != audit.ByUser || e.Result != "exit status 1" || !strings.Contains(string(e.Arguments), `"command":["`+bin+`","login"]`) {
		t.Fatalf("the failed login's row %+v", e)
	}
	if _, err := chat("whoami"); !errors.As(err, &se) || se.Err.Code != "acp_auth_required" {
		t.Fatalf("after a failed login: %v, want acp_auth_required", err)
	}

	// The login succeeds: the agent is signed in and the turn runs.
	if err := os.Remove(filepath.Join(creds, "refuse")); err != nil {
		t.Fatal(err)
	}
	msg, err := d.app.RunAgentLogin("coder", "scripted-login")
	if err != nil || !strings.Contains(msg, "Send your message again") {
		t.Fatalf("the login: %q, %v", msg, err)
	}
	if e := lastAudit(t, d, "agent_sign_in"); e.Result != "exit status 0" || e.Error != "" {
		t.Fatalf("the login's row %+v", e)
	}
	if got, err := chat("whoami"); err != nil || !strings.Contains(got, "session=") {
		t.Fatalf("after the login: %q, %v", got, err)
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}

// lastAudit is the newest audit row of tool.
func lastAudit(t *testing.T, d *realDesktop, tool string) audit.Entry {
	t.Helper()
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{Tool: tool})
	if err != nil || len(es) == 0 {
		t.Fatalf("no audit row for %s (%v)", tool, err)
	}
	return es[len(es)-1]
}
