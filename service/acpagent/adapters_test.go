package acpagent

import (
	"sync/atomic"

	"jarvis/internal/testpeer"

	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	adaptersOnce sync.Once
	adaptersErr  error
)

// adapters makes sure testdata/adapters' npm packages (real ACP adapters
// from the npm registry) are installed — scripts/setup.sh runs npm ci; here
// again when node_modules is missing or older than the lock file — and
// returns their bin folder.
func adapters(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is required for the real-adapter tests (scripts/setup.sh checks for it)")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "adapters"))
	if err != nil {
		t.Fatal(err)
	}
	adaptersOnce.Do(func() {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		if err != nil {
			adaptersErr = err
			return
		}
		if inst, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !inst.ModTime().Before(lock.ModTime()) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			adaptersErr = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
	})
	if adaptersErr != nil {
		t.Fatal(adaptersErr)
	}
	return filepath.Join(dir, "node_modules", ".bin")
}

// withoutLogin runs the adapter with an empty home and none of the
// model providers' keys: no login it could use.
func withoutLogin(t *testing.T) []string {
	for _, k := range []string{"OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
}

// codex-acp answers initialize (protocol 1, its sign-in methods) and
// refuses session/new with -32000 "Authentication required": the user reads
// which methods there are and what to run, never the JSON-RPC error.
func TestRealCodexACPNeedsSignIn(t *testing.T) {
	bin := adapters(t)
	env := withoutLogin(t)
	a, err := New(Options{Command: filepath.Join(bin, "codex-acp"), WorkDir: t.TempDir(), Env: env, InitTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, nil)
	t.Logf("codex-acp: %v", err)
	var ae *AuthRequiredError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *AuthRequiredError", err)
	}
	for _, want := range []string{"Login with ChatGPT", "codex login", "CODEX_API_KEY", "OPENAI_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if a.Running() {
		t.Error("the adapter is kept running after refusing the session")
	}
}

// claude-code-acp answers initialize; run as root (as here), its
// session/new fails with -32603 after printing that it cannot skip
// permissions as root: the message names that cause and says what to do.
func TestRealClaudeCodeACPAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("measured as root; a normal user gets the sign-in path")
	}
	bin := adapters(t)
	env := withoutLogin(t)
	a, err := New(Options{Command: filepath.Join(bin, "claude-code-acp"), WorkDir: t.TempDir(), Env: env, InitTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, nil)
	t.Logf("claude-code-acp: %v", err)
	if err == nil || !strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "session/new") || strings.Contains(err.Error(), `{"code"`) {
		t.Fatalf("err = %v, want session/new's failure naming root, in words", err)
	}
	// What to do, not only the agent's refusal.
	if !strings.Contains(err.Error(), "run Jarvis as your own user") || strings.Contains(err.Error(), "Query closed") {
		t.Fatalf("err = %v: does not say what to do", err)
	}
}

// responsesPeer is a scripted OpenAI Responses API server (POST
// /v1/responses, SSE) for the real codex-acp: a user message "run CMD" is
// answered with an exec_command call of CMD, a command's output with
// "done: OUTPUT", anything else with "Hello from script.". It keeps the
// last input item of every request.
type responsesPeer struct {
	*httptest.Server
	mu    sync.Mutex
	last  []map[string]any
	tools map[string]bool // the names of the tools codex offered its model
}

func newResponsesPeer(t *testing.T) *responsesPeer {
	p := &responsesPeer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []map[string]any `json:"input"`
			Tools []map[string]any `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Input) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		last := req.Input[len(req.Input)-1]
		p.mu.Lock()
		p.last = append(p.last, last)
		if p.tools == nil {
			p.tools = map[string]bool{}
		}
		for _, tl := range req.Tools {
			n, _ := tl["name"].(string)
			p.tools[n] = true
			subs, _ := tl["tools"].([]any) // a namespace of tools (codex's MCP servers)
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok {
					p.tools[fmt.Sprintf("%s.%v", n, m["name"])] = true
				}
			}
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(typ string, v map[string]any) {
			v["type"] = typ
			j, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, j)
		}
		done := func() {
			ev("response.completed", map[string]any{"response": map[string]any{"id": "resp_1", "usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
		}
		ev("response.created", map[string]any{"response": map[string]any{"id": "resp_1"}})
		text := "Hello from script."
		if last["type"] == "function_call_output" {
			text = fmt.Sprintf("done: %v", last["output"])
		} else if j, _ := json.Marshal(last["content"]); strings.Contains(string(j), `"run `) {
			cmd := strings.SplitN(string(j)[strings.Index(string(j), `"run `)+5:], `"`, 2)[0]
			args, _ := json.Marshal(map[string]any{"cmd": cmd})
			ev("response.output_item.done", map[string]any{"output_index": 0, "item": map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": string(args)}})
			done()
			return
		}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "content": []any{}}})
		ev("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": text})
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}})
		done()
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *responsesPeer) seen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := json.Marshal(p.last)
	return string(b)
}

// realCodex is codex-acp 0.16.0 with a CODEX_HOME whose model provider is
// the scripted peer, with the given approval policy and sandbox.
func realCodex(t *testing.T, peer *responsesPeer, policy, sandbox string, mcp ...MCPServer) (*Agent, string) {
	t.Helper()
	bin := adapters(t)
	home := t.TempDir()
	conf := fmt.Sprintf("model = \"test-model\"\nmodel_provider = \"scripted\"\napproval_policy = %q\nsandbox_mode = %q\n"+
		"[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nenv_key = \"SCRIPTED_KEY\"\nwire_api = \"responses\"\n", policy, sandbox, peer.URL+"/v1")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	a, err := New(Options{Command: filepath.Join(bin, "codex-acp"), WorkDir: work, InitTimeout: time.Minute,
		Env: append(withoutLogin(t), "CODEX_HOME="+home, "SCRIPTED_KEY=x"), MCP: mcp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, work
}

// Item 1 with the real adapter: codex-acp's reject option ("abort") ends
// its turn cancelled; Jarvis says the user denied it, tells codex, and codex
// goes on in the same turn. Nothing ran.
func TestRealCodexACPDeniedPermissionGoesOn(t *testing.T) {
	peer := newResponsesPeer(t)
	a, work := realCodex(t, peer, "untrusted", "workspace-write")
	h := &fileHost{allow: false}
	ev := &events{}
	res, err := a.Prompt(t.Context(), Input{Text: "run touch made.txt"}, h, ev.on)
	t.Logf("codex-acp: %+v, %v, events %q", res, err, ev.kinds())
	if err != nil {
		t.Fatalf("a denied permission failed the turn: %v", err)
	}
	if len(res.Denied) != 1 || res.Denied[0] != "touch made.txt" || len(h.perms) != 1 || h.perms[0].Kind != "execute" {
		t.Fatalf("denied %q, permissions %+v", res.Denied, h.perms)
	}
	if !strings.Contains(peer.seen(), "The user denied permission for: touch made.txt") || !strings.HasSuffix(res.Text, "Hello from script.") {
		t.Fatalf("codex was not told, or did not go on: %q; the model saw %s", res.Text, peer.seen())
	}
	if _, err := os.Stat(filepath.Join(work, "made.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// Item 2 with the real adapter: codex-acp takes images (promptCapabilities),
// so the attached image reaches its model as an input_image; its "Model
// metadata … not found" warning is a notice, not part of the reply.
func TestRealCodexACPImagesAndItsWarning(t *testing.T) {
	peer := newResponsesPeer(t)
	a, _ := realCodex(t, peer, "never", "read-only")
	ev := &events{}
	res, err := a.Prompt(t.Context(), Input{Text: "describe it", Images: []string{"data:image/png;base64,iVBORw0KGgo="}}, &fileHost{}, ev.on)
	t.Logf("codex-acp: %+v, %v, events %q", res, err, ev.kinds())
	if err != nil || res.ImagesDropped != 0 || res.Text != "Hello from script." {
		t.Fatalf("result %+v: %v", res, err)
	}
	if !strings.Contains(peer.seen(), `"image_url":"data:image/png;base64,iVBORw0KGgo="`) {
		t.Fatalf("the image did not reach codex's model: %s", peer.seen())
	}
	warned := false
	for _, k := range ev.kinds() {
		warned = warned || strings.HasPrefix(k, "notice:Model metadata for")
	}
	if !warned {
		t.Fatalf("codex's warning is not a notice: %q", ev.kinds())
	}
}

// Item 4 with the real adapter: a command codex runs itself (exec_command,
// not Jarvis's terminals) is reported with its input, for the audit's
// "ran inside the agent, not gated".
func TestRealCodexACPOwnCommandsReported(t *testing.T) {
	peer := newResponsesPeer(t)
	a, work := realCodex(t, peer, "never", "danger-full-access")
	h := &fileHost{}
	ev := &events{}
	res, err := a.Prompt(t.Context(), Input{Text: "run touch made.txt"}, h, ev.on)
	t.Logf("codex-acp: %+v, %v, events %q", res, err, ev.kinds())
	if err != nil {
		t.Fatal(err)
	}
	var got []AgentTool
	ev.mu.Lock()
	for _, e := range ev.evs {
		if e.AgentTool != nil {
			got = append(got, *e.AgentTool)
		}
	}
	ev.mu.Unlock()
	if len(got) != 1 || !got[0].OK || !strings.Contains(string(got[0].Input), "touch made.txt") {
		t.Fatalf("agent tools %+v", got)
	}
	if _, err := os.Stat(filepath.Join(work, "made.txt")); err != nil {
		t.Fatalf("codex did not run the command itself: %v", err)
	}
	if len(h.calls) != 0 {
		t.Fatalf("codex used Jarvis's client methods: %q", h.calls)
	}
}

// Measured: codex-acp 0.16.0 refuses session/new even with OPENAI_API_KEY
// set until its client calls authenticate with the "openai-api-key"
// method; with the key in the agent's environment Jarvis does, and the
// session starts.
func TestRealCodexACPSignsInWithAnAPIKey(t *testing.T) {
	bin := adapters(t)
	a, err := New(Options{Command: filepath.Join(bin, "codex-acp"), WorkDir: t.TempDir(), InitTimeout: time.Minute,
		Env: append(withoutLogin(t), "OPENAI_API_KEY=sk-test")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, _, err := a.ready(t.Context(), "k")
	if err != nil || p == nil || p.sessionID == "" {
		t.Fatalf("no session with the API key in the environment: %v", err)
	}
}

// Items 5 and 6 with the real adapter: codex-acp takes MCP servers over
// HTTP (mcpCapabilities.http): given one in session/new with a bearer
// header, as Jarvis gives its own endpoint, it connects with that header,
// lists the tools and offers them to its model (mcp__jarvis.echo, …).
// Measured too: codex-acp 0.16.0's session/new has no modes or models (it
// sends configOptions instead), so the picker shows nothing for it.
func TestRealCodexACPTakesAnMCPServerOverHTTP(t *testing.T) {
	peer := newResponsesPeer(t)
	mcpPeer := testpeer.NewMCPPeer()
	var authorized, refused atomic.Int32
	inner := mcpPeer.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer jmcp_test" {
			refused.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	a, _ := realCodex(t, peer, "never", "read-only", MCPServer{Name: "jarvis", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer jmcp_test"}})
	ev := &events{}
	res, err := a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, ev.on)
	t.Logf("codex-acp: %+v, %v; choices %+v; MCP requests %d authorized, %d refused", res, err, a.Choices(), authorized.Load(), refused.Load())
	if err != nil {
		t.Fatal(err)
	}
	peer.mu.Lock()
	var names []string
	for n := range peer.tools {
		names = append(names, n)
	}
	peer.mu.Unlock()
	t.Logf("tools offered to codex's model: %q", names)
	if authorized.Load() == 0 || refused.Load() != 0 {
		t.Fatalf("codex did not reach the MCP server with its header: %d authorized, %d refused", authorized.Load(), refused.Load())
	}
	found := false
	for _, n := range names {
		found = found || strings.Contains(n, "echo")
	}
	if !found {
		t.Fatalf("the MCP server's tools were not offered to codex's model: %q", names)
	}
}

// claude-code-acp, told at initialize that Jarvis runs terminal logins
// (the "terminal-auth" _meta), offers its login as one: node running its
// CLI, which the window runs in a terminal for the user.
func TestRealClaudeCodeACPOffersATerminalLogin(t *testing.T) {
	bin := adapters(t)
	env := withoutLogin(t)
	a, err := New(Options{Command: filepath.Join(bin, "claude-code-acp"), WorkDir: t.TempDir(), Env: env, InitTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ms, err := a.SignInMethods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claude-code-acp offers: %+v", ms)
	if len(ms) != 1 || ms[0].ID != "claude-login" || ms[0].Kind != "terminal" || ms[0].Command != "node" || len(ms[0].Args) != 1 || !strings.HasSuffix(ms[0].Args[0], "cli.js") {
		t.Fatalf("methods %+v, want claude-login run in a terminal as node …/cli.js", ms)
	}
	if _, err := os.Stat(ms[0].Args[0]); err != nil {
		t.Fatalf("the login's program: %v", err)
	}
}
