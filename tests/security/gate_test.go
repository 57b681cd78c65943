package security

// The real gate end to end: the jarvis-service binary runs the turns, and
// the desktop binary in --headless mode (the desktop's gate, executor and
// audit log with no window) answers their tool calls by its policy alone.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

// headlessGate is a running `jarvis --headless` following a running
// jarvis-service.
type headlessGate struct {
	svc       *proc.Proc
	c         *api.Client
	cmd       *exec.Cmd
	dataDir   string
	workspace string

	mu     sync.Mutex
	stderr strings.Builder
}

// binDir holds the binaries built once per run (TestMain removes it).
var binDir string

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "jarvis-security-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// desktopBinary builds the desktop binary once per run. The blankpage tag
// embeds an empty page instead of the built frontend: --headless never
// opens a window, and the suite must not depend on `npm run build`.
var desktopBinary = sync.OnceValues(func() (string, error) {
	return proc.Build(binDir, "jarvis", "desktop", "production", "webkit2_41", "sqlite_fts5", "blankpage")
})

// startHeadless starts jarvis-service (config cfg, with the scripted model
// at up) and `jarvis --headless` with policy, and waits until the gate
// follows the service.
func startHeadless(t *testing.T, cfg, policy string, setup func(workspace string)) *headlessGate {
	t.Helper()
	desk, err := desktopBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svcBin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &headlessGate{dataDir: filepath.Join(dir, "desktop"), workspace: filepath.Join(dir, "ws")}
	g.svc, err = proc.Start(svcBin, []string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "svc"), "--trust-config", "--config", cfgPath}, []string{"JARVIS_TOKEN="}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.svc.Kill)
	tok, err := os.ReadFile(filepath.Join(dir, "svc", "token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	g.c = api.NewClient(g.svc.URL, token, &http.Client{})

	for _, d := range []string{g.dataDir, g.workspace} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(g.dataDir, "policy.json"), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(g.workspace)
	}
	g.cmd = exec.Command(desk, "--headless", "--service-url", g.svc.URL, "--data-dir", g.dataDir, "--workspace", g.workspace)
	env := []string{"JARVIS_TOKEN=" + token}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") && !strings.HasPrefix(kv, "JARVIS_TOKEN=") {
			env = append(env, kv)
		}
	}
	g.cmd.Env = env // no display: the gate needs none
	pr, pw := io.Pipe()
	g.cmd.Stderr = pw
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.cmd.Process.Kill(); g.cmd.Wait(); pw.Close() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			g.mu.Lock()
			g.stderr.WriteString(sc.Text() + "\n")
			g.mu.Unlock()
			if strings.Contains(sc.Text(), "headless: following every session") {
				once()
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		t.Fatalf("jarvis --headless did not start: %s", g.log())
	}
	return g
}

func (g *headlessGate) log() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stderr.String()
}

// stop ends the gate with SIGTERM (it must exit 0) and returns its audit rows,
// after checking the chain.
func (g *headlessGate) stop(t *testing.T) []audit.Entry {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("jarvis --headless exited with %v: %s", err, g.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("jarvis --headless did not stop on SIGTERM: %s", g.log())
	}
	lg, err := audit.Open(filepath.Join(g.dataDir, "audit.db"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	rep, err := lg.Verify(context.Background())
	if err != nil || !rep.OK {
		t.Fatalf("audit chain: %+v %v", rep, err)
	}
	es, err := lg.List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// turn sends text in a new session of agent and returns the tool.result
// events of the turn, by tool call id, and the tool.requests.
func (g *headlessGate) turn(t *testing.T, agent, text string) ([]api.ToolCall, map[string]api.ToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := g.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("sec-%d", time.Now().UnixNano()), AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []api.ToolCall
	results := map[string]api.ToolResult{}
	err = g.c.ChatStream(ctx, s.GeneralSessionID, text, func(ev api.StreamEvent) error {
		switch ev.Type {
		case api.EventToolRequest:
			var tc api.ToolCall
			json.Unmarshal(ev.Data, &tc)
			reqs = append(reqs, tc)
		case api.EventToolResult:
			var r api.ToolResult
			json.Unmarshal(ev.Data, &r)
			results[r.ID] = r
		}
		return nil
	})
	if err != nil {
		t.Fatalf("chat: %v; gate log: %s", err, g.log())
	}
	return reqs, results
}

// TestHeadlessGateEndToEnd drives the real gate through the real binaries:
// every spelling of a denied path is denied or refused, a call the policy
// allows runs in its canonical form, a call that would prompt is denied and
// audited as decided by "headless", and every call has its audit row.
func TestHeadlessGateEndToEnd(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	const secret = "API_KEY=suite-secret-91c2"
	g := startHeadless(t, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"toolResultTimeoutSeconds":60}`, up.URL+"/v1"),
		`{"rules":[{"tool":"read_file","args":{"path":"config/*"},"action":"deny"},{"tool":"write_file","args":{"path":"notes/*"},"action":"allow"}]}`,
		func(ws string) {
			os.MkdirAll(filepath.Join(ws, "config"), 0o700)
			os.WriteFile(filepath.Join(ws, "config", ".env"), []byte(secret), 0o600)
			os.Symlink(filepath.Join(ws, "config", ".env"), filepath.Join(ws, "link.env"))
		})
	type want struct {
		args     string
		ok       bool
		by       string // audit decided_by
		decision string
	}
	wants := []want{
		{`{"path":"config/.env"}`, false, audit.ByPolicy, audit.Denied},
		{`{"path":"./config//.env"}`, false, audit.ByPolicy, audit.Denied},
		{`{"path":"link.env"}`, false, audit.ByPolicy, audit.Denied},
		{`{"PATH":"config/.env"}`, false, audit.ByPolicy, audit.Denied},
		{`{"path":"other.txt","Path":"config/.env"}`, false, audit.ByPolicy, audit.Denied},
	}
	var msg strings.Builder
	for _, w := range wants {
		fmt.Fprintf(&msg, "[[tool read_file %s]] ", w.args)
	}
	msg.WriteString(`[[tool write_file {"path":"./notes//a.md","content":"allowed by policy"}]] `)
	msg.WriteString(`[[tool write_file {"path":"elsewhere.md","content":"needs a prompt"}]] `)
	msg.WriteString(`[[tool list_dir {}]]`)
	reqs, results := g.turn(t, "general", msg.String())
	if len(reqs) != len(wants)+3 {
		t.Fatalf("%d tool.requests, want %d", len(reqs), len(wants)+3)
	}
	byID := map[string]api.ToolCall{}
	for _, r := range reqs {
		byID[r.ID] = r
		res, ok := results[r.ID]
		if !ok || res.Source != "desktop" {
			t.Fatalf("call %s %s: result %+v, want one from the desktop's gate", r.Name, r.Arguments, res)
		}
		if strings.Contains(res.Result, secret) {
			t.Fatalf("call %s %s read the secret", r.Name, r.Arguments)
		}
		switch {
		case r.Name == "read_file":
			if res.OK {
				t.Fatalf("read_file %s ran: %+v", r.Arguments, res)
			}
		case r.Name == "write_file" && strings.Contains(string(r.Arguments), "notes"):
			if !res.OK {
				t.Fatalf("the policy allows notes/*: %+v", res)
			}
		case r.Name == "write_file":
			if res.OK || res.Error == nil || !strings.Contains(*res.Error, "nobody to ask") {
				t.Fatalf("a call that would prompt: %+v, want denied (headless)", res)
			}
		case r.Name == "list_dir":
			if !res.OK {
				t.Fatalf("list_dir: %+v", res)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(g.workspace, "notes", "a.md")); err != nil || string(b) != "allowed by policy" {
		t.Fatalf("notes/a.md = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(g.workspace, "elsewhere.md")); err == nil {
		t.Fatal("the call that would prompt ran")
	}

	es := g.stop(t)
	if len(es) != len(reqs) {
		t.Fatalf("%d audit rows for %d calls", len(es), len(reqs))
	}
	for _, e := range es {
		r := byID[e.ToolCallID]
		switch {
		case r.Name == "read_file":
			if e.Decision != audit.Denied || e.DecidedBy != audit.ByPolicy {
				t.Fatalf("read_file row %+v", e)
			}
		case r.Name == "write_file" && e.DecidedBy == audit.ByHeadless:
			if e.Decision != audit.Denied || !strings.Contains(e.Reason, "nobody to ask") {
				t.Fatalf("headless row %+v", e)
			}
		case r.Name == "write_file":
			if e.Decision != audit.Allowed || string(e.Arguments) != `{"content":"allowed by policy","path":"notes/a.md"}` {
				t.Fatalf("allowed row %+v (want the canonical call)", e)
			}
		case r.Name == "list_dir":
			if e.Decision != audit.Allowed {
				t.Fatalf("list_dir row %+v", e)
			}
		default:
			t.Fatalf("unexpected row %+v", e)
		}
	}
}

// TestHeadlessGateJudgesServiceTools: through the real binaries, a message
// to an external agent (data leaving the process) passes the same gate and
// policy as the OS tools: allowed for the agent a rule names, denied as
// headless for another; memory_write, which stays in the process, runs and
// is recorded in the same audit chain as decided by the service.
func TestHeadlessGateJudgesServiceTools(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	var mu sync.Mutex
	got := map[string][]string{}
	ext := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var in api.ExternalInput
			json.NewDecoder(r.Body).Decode(&in)
			mu.Lock()
			got[name] = append(got[name], in.Message.Text)
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		}))
		t.Cleanup(s.Close)
		return s
	}
	trusted, stranger := ext("trusted"), ext("stranger")
	g := startHeadless(t, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"toolResultTimeoutSeconds":60,"agents":[{"agentId":"general","displayName":"General"},
		{"agentId":"trusted","displayName":"Trusted","type":"external","external":{"inputUrl":%q}},
		{"agentId":"stranger","displayName":"Stranger","type":"external","external":{"inputUrl":%q}}]}`, up.URL+"/v1", trusted.URL, stranger.URL),
		`{"rules":[{"tool":"agents_message","args":{"agentId":"trusted"},"action":"allow"}]}`, nil)
	_, results := g.turn(t, "general", `[[tool agents_message {"agentId":"trusted","content":"for the trusted agent","mode":"async"}]] `+
		`[[tool agents_message {"agentId":"stranger","content":"for the stranger","mode":"async"}]] `+
		`[[tool memory_write {"target":"daily","content":"a note"}]]`)
	mu.Lock()
	gotTrusted, gotStranger := got["trusted"], got["stranger"]
	mu.Unlock()
	if len(gotTrusted) != 1 || gotTrusted[0] != "for the trusted agent" || len(gotStranger) != 0 {
		t.Fatalf("trusted got %q, stranger got %q", gotTrusted, gotStranger)
	}
	var okMemory bool
	for _, r := range results {
		if r.Name == "memory_write" && r.OK {
			okMemory = true
		}
	}
	if !okMemory {
		t.Fatalf("memory_write did not run: %+v", results)
	}
	es := g.stop(t)
	var rows []string
	for _, e := range es {
		var a map[string]any
		json.Unmarshal(e.Arguments, &a)
		rows = append(rows, fmt.Sprintf("%s %v %s/%s", e.Tool, a["agentId"], e.Decision, e.DecidedBy))
	}
	want := map[string]bool{
		"agents_message trusted allowed/policy":   true,
		"agents_message stranger denied/headless": true,
		"memory_write <nil> allowed/service":      true,
	}
	if len(rows) != len(want) {
		t.Fatalf("audit rows %q", rows)
	}
	for _, r := range rows {
		if !want[r] {
			t.Fatalf("audit rows %q, want %v", rows, want)
		}
	}
}
