package acprt_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"jarvis/internal/testhttp"
	"jarvis/service/acpagent"
	"jarvis/service/acprt"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// keyring is a writable secret store in memory.
type keyring struct {
	mu sync.Mutex
	m  map[string]string
}

func (k *keyring) Get(ref string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.m[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

func (k *keyring) Put(ref, v string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[ref] = v
	return "keyring", nil
}

// An agent that refuses to start until the user signs in: the turn fails
// acp_auth_required; the window reads the methods it offered, gives the key
// of its API-key method (stored in the keyring), and the turn sent again
// signs in with it (authenticate) and runs.
func TestACPSignInWithAKeyFromTheWindow(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_AUTH":"1"}}}],"toolResultTimeoutSeconds":30}`, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := turntest.Env(t, dir, cfg)
	kr := &keyring{m: map[string]string{}}
	env.Secrets = kr
	rt := acprt.New(env, acprt.Options{Waiter: toolwait.New(env), PutSecret: kr.Put,
		Instructions:    func(*config.Config, config.Agent) string { return "" },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(rt.Close)
	mux := http.NewServeMux()
	for _, r := range rt.Routes() {
		mux.Handle(r.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), r.Handle))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	agent, _ := cfg.Agent("coder")

	tt, sess := turntest.Begin(t, env, "coder", "whoami")
	out := rt.Run(context.Background(), tt, sess, agent)
	if out.Fail == nil || out.Fail.Code != "acp_auth_required" {
		t.Fatalf("first turn %+v, want acp_auth_required", out)
	}
	var got struct {
		Methods []struct {
			ID, Kind string
			Vars     []string
		}
	}
	u := srv.URL + "/v1/agents/coder/sign-in"
	testhttp.Do(t, "GET", u, "", 200, &got)
	if len(got.Methods) != 2 || got.Methods[1].ID != "anthropic-api-key" || got.Methods[1].Kind != "env_var" || strings.Join(got.Methods[1].Vars, ",") != "ANTHROPIC_API_KEY" || got.Methods[0].Kind != "agent" {
		t.Fatalf("methods %+v", got.Methods)
	}
	// The agent's own login (codex-acp's ChatGPT): authenticate, which
	// this agent refuses.
	testhttp.Fails(t, "PUT", u, `{"methodId":"claude-login"}`, 502, "sign_in_failed")
	testhttp.Fails(t, "PUT", u, `{"methodId":"anthropic-api-key","values":{}}`, 400, "missing_field")
	testhttp.Fails(t, "PUT", u, `{"methodId":"nope"}`, 400, "invalid_field")
	testhttp.Fails(t, "GET", srv.URL+"/v1/agents/ghost/sign-in", "", 404, "agent_not_found")
	testhttp.Do(t, "PUT", u, `{"methodId":"anthropic-api-key","values":{"ANTHROPIC_API_KEY":"sk-test"}}`, 200, nil)
	if kr.m["acp_coder_ANTHROPIC_API_KEY"] != "sk-test" {
		t.Fatalf("keyring %v", kr.m)
	}

	tt2 := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: tt.User}
	if again := rt.Run(context.Background(), tt2, sess, agent); again.Fail != nil || !strings.Contains(again.Final, "session=") {
		t.Fatalf("after signing in %+v", again)
	}
}

// An agent whose sign-in is a login run in a terminal (claude-code-acp's
// "terminal-auth" _meta, announced by Jarvis at initialize): the turn
// fails acp_auth_required; GET names the login's program, arguments and
// environment; the window runs it (here the test runs it as the window
// does) and then PUTs the method, which calls authenticate (this agent,
// like claude-code-acp, does not implement it: not an error); the turn
// sent again starts a session signed in.
func TestACPSignInWithATerminalLogin(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,
		"env":{"SCRIPTED_AUTH":"terminal","SCRIPTED_DIR":%q}}}],"toolResultTimeoutSeconds":30}`, bin, dir)))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := turntest.Env(t, dir, cfg)
	rt := acprt.New(env, acprt.Options{Waiter: toolwait.New(env),
		Instructions:    func(*config.Config, config.Agent) string { return "" },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(rt.Close)
	mux := http.NewServeMux()
	for _, r := range rt.Routes() {
		mux.Handle(r.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), r.Handle))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	agent, _ := cfg.Agent("coder")

	tt, sess := turntest.Begin(t, env, "coder", "whoami")
	if out := rt.Run(context.Background(), tt, sess, agent); out.Fail == nil || out.Fail.Code != "acp_auth_required" {
		t.Fatalf("first turn %+v, want acp_auth_required", out)
	}
	var got struct{ Methods []acpagent.AuthMethod }
	u := srv.URL + "/v1/agents/coder/sign-in"
	testhttp.Do(t, "GET", u, "", 200, &got)
	creds := filepath.Join(dir, "credentials")
	if len(got.Methods) != 2 {
		t.Fatalf("methods %+v", got.Methods)
	}
	m := got.Methods[0]
	if m.ID != "scripted-login" || m.Kind != "terminal" || m.Command != bin || strings.Join(m.Args, " ") != "login" || m.Label != "Scripted Login" || m.Env["SCRIPTED_CREDENTIALS"] != creds {
		t.Fatalf("the terminal login %+v", m)
	}

	// The login the window runs for the user.
	login := exec.Command(m.Command, m.Args...)
	login.Env = append(os.Environ(), "SCRIPTED_CREDENTIALS="+m.Env["SCRIPTED_CREDENTIALS"])
	if out, err := login.CombinedOutput(); err != nil || !strings.Contains(string(out), "Signed in.") {
		t.Fatalf("the login: %v %s", err, out)
	}
	var ok struct{ Message string }
	testhttp.Do(t, "PUT", u, `{"methodId":"scripted-login"}`, 200, &ok)
	if !strings.Contains(ok.Message, "Signed in (Log in with Scripted)") {
		t.Fatalf("PUT said %q", ok.Message)
	}
	tt2 := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: tt.User}
	if again := rt.Run(context.Background(), tt2, sess, agent); again.Fail != nil || !strings.Contains(again.Final, "session=") {
		t.Fatalf("after the login %+v", again)
	}
}
