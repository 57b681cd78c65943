package app

// An ACP agent's terminal login, run for the user: the "Sign in" of an
// agent's "needs you to sign in" error offers the agent's login program
// (its terminal auth method); the click opens a terminal the user sees
// running it, Jarvis waits for it to end, writes the audit row (a program
// the user started), and then signs the agent in (authenticate, through
// the service); the window then sends the message again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/internal/childenv"
	"jarvis/tools"
)

// loginWait bounds a terminal login: the user reads, types, may open a
// browser page.
const loginWait = 10 * time.Minute

// agentSignInWait bounds an authenticate the agent runs itself (the service
// allows as long).
const agentSignInWait = 5*time.Minute + 10*time.Second

// terminals are the desktop's terminal programs, in the order tried, each
// with the flag after which it runs a program with its arguments.
var terminals = [][]string{{"x-terminal-emulator", "-e"}, {"gnome-terminal", "--"}, {"konsole", "-e"}, {"xfce4-terminal", "-x"}, {"xterm", "-e"}}

// terminalArgv is Options.Terminal, or the first desktop terminal found.
func (a *App) terminalArgv() []string {
	if len(a.terminal) > 0 {
		return a.terminal
	}
	for _, t := range terminals {
		if p, err := exec.LookPath(t[0]); err == nil {
			return append([]string{p}, t[1:]...)
		}
	}
	return nil
}

// loginScript is the script the terminal runs (one file, so that every
// terminal takes it as one program whatever it does with the words after
// its flag): the login with its environment, then its exit status written
// where Jarvis waits for it (a terminal may hand the program to a server
// and return at once, so its own exit says nothing), then the terminal
// kept open until the user has read it.
func loginScript(login []string, env map[string]string, status string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s\n", k, shellWords([]string{env[k]}))
	}
	fmt.Fprintf(&b, "%s\necho $? > %s\n", shellWords(login), shellWords([]string{status}))
	b.WriteString("printf '\\nJarvis goes on now. Press Enter to close this terminal.'\nread _\n")
	return b.String()
}

// RunAgentLogin runs one of an ACP agent's terminal logins for the user in
// a terminal they see, waits for it to end, then signs the agent in; the
// answer is what to tell the user (send the message again).
func (a *App) RunAgentLogin(agentID, methodID string) (string, error) {
	ms, err := a.AgentSignIn(agentID)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(ms.Methods, func(m SignInMethod) bool { return m.ID == methodID && m.Kind == "terminal" && m.Command != "" })
	if i < 0 {
		return "", fmt.Errorf("the agent offers no sign-in run in a terminal named %q: send the message again to see its sign-in methods", methodID)
	}
	m := ms.Methods[i]
	login := append([]string{m.Command}, m.Args...)
	term := a.terminalArgv()
	if term == nil {
		return "", fmt.Errorf("no terminal program was found on this computer: run %s in a terminal yourself, then send the message again", shellWords(login))
	}
	ctx, cancel := context.WithTimeout(a.ctx, loginWait)
	defer cancel()
	code, runErr := runInTerminal(ctx, term, login, m.Env)
	a.auditLogin(agentID, m, login, code, runErr)
	if runErr != nil {
		return "", runErr
	}
	if code != 0 {
		return "", fmt.Errorf("the sign-in program ended with status %d: it did not sign you in. What it said is in its terminal; try again", code)
	}
	actx, acancel := context.WithTimeout(a.ctx, agentSignInWait)
	defer acancel()
	var out struct {
		Message string `json:"message"`
	}
	if err := a.s.c.Do(actx, http.MethodPut, "/v1/agents/"+url.PathEscape(agentID)+"/sign-in", api.SignInRequest{MethodID: methodID}, &out); err != nil {
		return "", friendly(err)
	}
	return out.Message, nil
}

// runInTerminal runs login (with env added to Jarvis's environment, less
// its own secrets) in the terminal term and returns its exit status.
func runInTerminal(ctx context.Context, term, login []string, env map[string]string) (int, error) {
	dir, err := os.MkdirTemp("", "jarvis-login-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	status, script := filepath.Join(dir, "status"), filepath.Join(dir, "login.sh")
	for k := range env {
		if !validEnvName(k) {
			return 0, fmt.Errorf("the agent's sign-in names an environment variable Jarvis will not set: %q", k)
		}
	}
	if err := os.WriteFile(script, []byte(loginScript(login, env, status)), 0o700); err != nil {
		return 0, err
	}
	argv := append(append([]string{}, term...), script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = childenv.Scrub(os.Environ(), childenv.JarvisSecrets)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("the terminal could not be opened: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(status); err == nil && strings.HasSuffix(string(b), "\n") {
			return strconv.Atoi(strings.TrimSpace(string(b)))
		}
		select {
		case err := <-exited:
			exited = nil // a terminal that handed the program on returns at once: keep waiting for the status
			if b, rerr := os.ReadFile(status); rerr == nil && strings.HasSuffix(string(b), "\n") {
				return strconv.Atoi(strings.TrimSpace(string(b)))
			}
			if err != nil {
				return 0, fmt.Errorf("the terminal was closed before the sign-in ended (%v)", err)
			}
		case <-tick.C:
		case <-ctx.Done():
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
			}
			return 0, errors.New("the sign-in did not end within 10 minutes: Jarvis stopped waiting; try again")
		}
	}
}

// auditLogin records the login the user started: the program, its status.
func (a *App) auditLogin(agentID string, m SignInMethod, login []string, code int, runErr error) {
	if a.audit == nil {
		return
	}
	args, _ := json.Marshal(map[string]any{"agent": agentID, "method": m.ID, "command": login})
	e := audit.Entry{Tool: "agent_sign_in", Arguments: args, Class: string(tools.Risky), Decision: audit.Allowed, DecidedBy: audit.ByUser,
		Reason: "a sign-in the user started from the window, run in a terminal they saw", Result: fmt.Sprintf("exit status %d", code)}
	if runErr != nil {
		e.Error, e.Result = runErr.Error(), ""
	}
	if _, err := a.audit.Append(context.WithoutCancel(a.ctx), e); err != nil {
		a.log.Error("audit the agent's sign-in", "err", err)
	}
}

// validEnvName is a name a shell can export.
func validEnvName(k string) bool {
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}

// shellWords is argv as the user would type it.
func shellWords(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
