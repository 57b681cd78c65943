// Package e2e is the in-window end-to-end self-test that the e2e build of
// the desktop binary carries (the root's e2e_on.go wires it; normal builds
// carry none of it). It starts a scripted
// OpenAI-compatible upstream (internal/testpeer) and a scripted external
// agent on loopback, configures the in-process service with them, and on
// DOM ready runs frontend/e2e/selftest.js inside the real WebKitGTK window.
// The script drives the DOM like a user and reports through the bound E2E
// object; Done ends the app with the test's verdict as its exit code. A
// watchdog fails a hung run. Screenshots and bench.md go to JARVIS_E2E_OUT
// (default build/e2e). The window's functions come in as Window, so that
// only main imports Wails.
package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"jarvis/app"
	"jarvis/app/audit"
	"jarvis/internal/approved"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

// Window is what the harness does to the window (Wails' runtime, given by
// main).
type Window struct {
	ExecJS      func(ctx context.Context, js string)
	Quit        func(ctx context.Context)
	SetSize     func(ctx context.Context, w, h int)
	SetPosition func(ctx context.Context, x, y int)
}

// Launch is what the harness is given by main.
type Launch struct {
	DataDir, ConfigPath string
	Getenv              func(string) string
	Started             time.Time
	Window              Window
	// Selftest is frontend/e2e/selftest.js, embedded by main.
	Selftest string
}

// Harness is the self-test's side of the launch: the scripted peers, the
// watchdog and the hooks main calls.
type Harness struct {
	e2e      *E2E
	selftest string
	config   *config.Config
	peer     *http.Server
	ext      *http.Server
	rt       *http.Server
	rtAddr   string
	watchdog *time.Timer
}

// E2E is bound to the window as window.go.e2e.E2E.
type E2E struct {
	win     Window
	out     string
	started time.Time
	runner  *app.Runner

	mu      sync.Mutex
	ctx     context.Context
	done    bool
	ok      bool
	msg     string
	marks   map[string]time.Duration
	markSrc string
	domAt   time.Duration
	extHit  int
	peerURL string
	dataDir string // where exports go (no dialogs in this build)
	phase   string // "restart": the second start, checking what the first saved
	taskDay string // JARVIS_E2E_TASK_DAY: today in the scheduled task's time zone
}

// Phase is JARVIS_E2E_PHASE: "" for the full run, "restart" for the
// second start that checks the setup was saved; "tasks" and "tasks-inbox"
// for the scheduled-tasks scenario on a data dir of its own (a task asked
// for in the conversation; after a headless run while the window was
// closed, its approval and result in the Inbox).
func (e *E2E) Phase() string { return e.phase }

// TaskDay is today (YYYY-MM-DD) in the scheduled task's time zone, as
// scripts/e2e.sh computed it for the scripted model: the day of the note the
// task writes.
func (e *E2E) TaskDay() string { return e.taskDay }

// New starts the scripted peers and writes the run's configuration. The
// service is started with Config (nil: main loads the --config file the
// harness wrote); the window makes no native dialogs.
func New(l Launch) (*Harness, error) {
	out := l.Getenv("JARVIS_E2E_OUT")
	if out == "" {
		out = filepath.Join("build", "e2e")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	e := &E2E{win: l.Window, out: out, started: l.Started, marks: map[string]time.Duration{}, dataDir: l.DataDir}
	h := &Harness{e2e: e, selftest: l.Selftest}

	peerLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.peer = &http.Server{Handler: testpeer.NewOpenAI(), ReadHeaderTimeout: 5 * time.Second}
	go h.peer.Serve(peerLn)

	extLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.ext = &http.Server{Handler: http.HandlerFunc(e.externalAgent), ReadHeaderTimeout: 5 * time.Second}
	go h.ext.Serve(extLn)

	rtLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.rt = &http.Server{Handler: http.HandlerFunc(roundTableAgent), ReadHeaderTimeout: 5 * time.Second}
	h.rtAddr = rtLn.Addr().String()
	go h.rt.Serve(rtLn)
	e.peerURL = fmt.Sprintf("http://%s/v1", peerLn.Addr())

	// No provider at first: the self-test configures the scripted upstream
	// through the setup form, as a user on first run would.
	conf := fmt.Sprintf(`{
  "toolResultTimeoutSeconds": 60,
  "agents": [
    {"agentId": "general", "displayName": "General Assistant", "description": "Scripted upstream"},
    {"agentId": "ext", "displayName": "External Echo", "description": "A scripted external agent", "type": "external",
     "external": {"inputUrl": "http://%s/input"}},
    {"agentId": "px", "displayName": "Proxy Helper", "description": "A scripted proxy agent", "type": "proxy",
     "proxy": {"url": "http://%s/proxy", "debug": {"enable": true}}},
    {"agentId": "council", "displayName": "Review Council", "description": "Round table of two scripted agents", "type": "roundtable",
     "roundtable": {"participants": ["security", "performance"]}}
  ]
}`, extLn.Addr(), extLn.Addr())
	e.phase, e.taskDay = l.Getenv("JARVIS_E2E_PHASE"), l.Getenv("JARVIS_E2E_TASK_DAY")
	if e.phase == "tasks" {
		// The scheduled-tasks scenario: the model is the scripted one of
		// the weekday notes (openai-peer -weekday-notes, started by
		// scripts/e2e.sh), the same for the window and for the headless
		// process that runs the task while the window is closed.
		peer := l.Getenv("JARVIS_E2E_PEER_URL")
		if peer == "" {
			return nil, errors.New("the tasks phase needs JARVIS_E2E_PEER_URL (the weekday-notes model)")
		}
		e.peerURL = peer
		conf = fmt.Sprintf(`{"defaultProvider": "openai-compatible", "toolResultTimeoutSeconds": 60,
  "providers": {"openai-compatible": {"baseUrl": %q, "model": "scripted"}},
  "agents": [{"agentId": "general", "displayName": "General Assistant", "description": "Scripted weekday-notes model"}]
}`, peer)
	}
	c, err := config.Parse("e2e.json", []byte(conf))
	written := conf
	if err != nil {
		// An older service may not know external agents: run without one.
		fmt.Fprintln(os.Stderr, "e2e: external agent config refused, continuing without it:", err)
		conf2 := fmt.Sprintf(`{"defaultProvider": "openai-compatible", "toolResultTimeoutSeconds": 60,
  "providers": {"openai-compatible": {"baseUrl": "http://%s/v1", "model": "scripted"}}}`, peerLn.Addr())
		if c, err = config.Parse("e2e.json", []byte(conf2)); err != nil {
			return nil, err
		}
		written = conf2
	}
	h.config = c
	// The config goes to the --config file, which the first run's setup
	// rewrites as a user's would be; a second start with
	// JARVIS_E2E_PHASE=restart reads the provider saved there.
	if l.ConfigPath != "" {
		if e.phase != "restart" && e.phase != "tasks-inbox" {
			if err := os.WriteFile(l.ConfigPath, []byte(written), 0o600); err != nil {
				return nil, err
			}
			// Jarvis's own write, as the setup page's: approved as written.
			store, err := approved.Open(l.DataDir)
			if err != nil {
				return nil, err
			}
			if err := store.Approve(service.ConfigApproval, []byte(written)); err != nil {
				return nil, err
			}
		}
		h.config = nil // main loads the file and lets the setup save to it
	}

	// JARVIS_E2E_WATCHDOG (seconds, default 150) gives a loaded machine
	// more time; scripts/e2e.sh sizes its own timeouts from it.
	limit := 150
	if n, err := strconv.Atoi(l.Getenv("JARVIS_E2E_WATCHDOG")); err == nil && n > 0 {
		limit = n
	}
	h.watchdog = time.AfterFunc(time.Duration(limit)*time.Second, func() {
		e.finish(false, fmt.Sprintf("watchdog: the self-test did not finish within %d s", limit))
		time.AfterFunc(10*time.Second, func() {
			fmt.Fprintln(os.Stderr, "e2e: FAIL (hard exit: the window did not close)")
			os.Exit(3)
		})
	})
	return h, nil
}

// externalAgent is a scripted external agent: it accepts the service's
// input payload (docs/protocols/external-agents.md) and answers through the callback URL with a
// reply that carries HTML and script, which the window must show inert.
func (e *E2E) externalAgent(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/proxy" {
		proxyAgent(w, r)
		return
	}
	var in struct {
		SessionID   string `json:"sessionId"`
		CallbackURL string `json:"callbackUrl"`
		Message     struct {
			Text string `json:"text"`
		} `json:"message"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.extHit++
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
	go func() {
		time.Sleep(400 * time.Millisecond)
		reply := "External reply to *" + in.Message.Text + "*: <img src=x onerror=\"window.__pwned='ext-img'\"><script>window.__pwned='ext-script'</script> done."
		resp, err := http.Post(in.CallbackURL, "text/plain", strings.NewReader(reply))
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: external callback failed:", err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			fmt.Fprintln(os.Stderr, "e2e: external callback status", resp.StatusCode)
		}
	}()
}

// Config is the service's configuration for this run; nil when main
// loads the --config file the harness wrote.
func (h *Harness) Config() *config.Config { return h.config }

// Attach gives the harness the tool runner (the audit log, the workspace).
func (h *Harness) Attach(r *app.Runner) { h.e2e.runner = r }

// Service registers the scripted round-table agents once the service answers.
func (h *Harness) Service(base, token string) {
	go func() {
		for _, name := range []string{"security", "performance"} {
			body := fmt.Sprintf(`{"name":%q,"domain":"code review","base_url":"http://%s/%s","capabilities":["review"],"timeout_seconds":10}`, name, h.rtAddr, name)
			req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/agents", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				fmt.Fprintln(os.Stderr, "e2e: register round-table agent:", err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				fmt.Fprintln(os.Stderr, "e2e: register round-table agent:", resp.Status, string(b))
			}
		}
	}()
}

// proxyAgent is a scripted proxy agent answering the Agent Protocol (docs/protocols/proxy-agents.md).
func proxyAgent(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Input []struct {
			Content string `json:"content"`
		} `json:"input"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in)
	text := ""
	if len(in.Input) > 0 {
		text = in.Input[0].Content
	}
	time.Sleep(120 * time.Millisecond)
	out := map[string]any{
		"messageId":   "msg-e2e",
		"output":      []map[string]string{{"type": "text", "content": "Proxy says: **" + text + "** <img src=x onerror=\"window.__pwned='px'\">"}},
		"debug":       []map[string]string{{"type": "thought", "content": "Looked the question up in the scripted playbook"}},
		"sessionInfo": map[string]any{"status": "idle", "conversationState": "COMPLETED"},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// roundTableAgent is two scripted round-table agents (docs/protocols/roundtable-agents.md) under
// /security and /performance: findings with evidence, a challenge, a
// concession, and one dissenting vote, with some HTML the window must show
// inert. Each call is a little slow so the progress card is visible.
func roundTableAgent(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)
	if len(parts) != 2 {
		http.NotFound(w, r)
		return
	}
	name, op := parts[0], parts[1]
	io.Copy(io.Discard, io.LimitReader(r.Body, 32<<20))
	var out any
	switch op {
	case "analyze":
		time.Sleep(900 * time.Millisecond)
		if name == "security" {
			out = map[string]any{"agent_name": name, "domain": "code review", "confidence": 0.8,
				"observations": []map[string]any{
					{"finding": "SQL query built by string concatenation", "evidence": "[INDICATED: task_content] the query joins user input with '+'", "severity": "critical", "confidence": 0.9},
					{"finding": "Error pages echo <b>raw input</b> <img src=x onerror=\"window.__pwned='rt'\">", "evidence": "[POSSIBLE: task_content] error handler prints the request", "severity": "warning", "confidence": 0.6},
				},
				"recommendations": []map[string]any{{"action": "Use parameterized queries", "rationale": "prevents SQL injection", "priority": "critical"}}}
		} else {
			time.Sleep(600 * time.Millisecond)
			out = map[string]any{"agent_name": name, "domain": "code review", "confidence": 0.7,
				"observations":    []map[string]any{{"finding": "The query runs once per item (N+1)", "evidence": "[INDICATED: task_content] a loop issues one query per row", "severity": "warning", "confidence": 0.7}},
				"recommendations": []map[string]any{{"action": "Batch the queries", "rationale": "one round trip", "priority": "warning"}}}
		}
	case "challenge":
		time.Sleep(500 * time.Millisecond)
		if name == "security" {
			out = map[string]any{"agent_name": name, "challenges": []any{},
				"concessions": []map[string]any{{"target_agent": "performance", "finding_accepted": "The query runs once per item (N+1)", "reason": "The loop is visible in the task"}}}
		} else {
			out = map[string]any{"agent_name": name, "concessions": []any{},
				"challenges": []map[string]any{{"target_agent": "security", "finding_challenged": "Error pages echo raw input", "counter_evidence": "[INDICATED: task_content] the error handler escapes output with html.EscapeString"}}}
		}
	case "vote":
		time.Sleep(400 * time.Millisecond)
		if name == "security" {
			out = map[string]any{"agent_name": name, "approve": true, "conditions": []string{"Parameterize every query before release"}, "dissent_reason": nil}
		} else {
			out = map[string]any{"agent_name": name, "approve": false, "conditions": []string{}, "dissent_reason": "Batching must come first: the N+1 pattern is the bigger risk"}
		}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// PeerURL is the scripted upstream's base URL, for the setup form.
func (e *E2E) PeerURL() string { return e.peerURL }

// Startup is the window starting (OnStartup).
func (h *Harness) Startup(ctx context.Context) {
	h.e2e.Log("window starting (OnStartup)")
	h.e2e.mu.Lock()
	h.e2e.ctx = ctx
	h.e2e.mu.Unlock()
}

// DomReady runs the self-test in the page.
func (h *Harness) DomReady(ctx context.Context) {
	h.e2e.mu.Lock()
	if h.e2e.domAt == 0 {
		h.e2e.domAt = time.Since(h.e2e.started)
	}
	h.e2e.mu.Unlock()
	h.e2e.Log("DOM ready")
	h.e2e.win.ExecJS(ctx, h.selftest)
}

// Bind is what the window binds: the E2E object.
func (h *Harness) Bind() []any { return []any{h.e2e} }

// ExitCode is the self-test's verdict.
func (h *Harness) ExitCode() int {
	h.e2e.mu.Lock()
	defer h.e2e.mu.Unlock()
	if !h.e2e.done {
		fmt.Println("e2e: FAIL: the window closed before the self-test finished")
		return 1
	}
	if !h.e2e.ok {
		fmt.Println("e2e: FAIL:", h.e2e.msg)
		return 1
	}
	fmt.Println("e2e: PASS:", h.e2e.msg)
	return 0
}

// Close stops the watchdog and the scripted peers.
func (h *Harness) Close() {
	h.watchdog.Stop()
	h.peer.Close()
	h.ext.Close()
	h.rt.Close()
}

// --- bound methods (called by selftest.js) ---

// Log prints a progress line of the self-test.
func (e *E2E) Log(msg string) {
	fmt.Printf("e2e: [%6.2fs] %s\n", time.Since(e.started).Seconds(), msg)
}

// Done ends the run with the test's verdict.
func (e *E2E) Done(ok bool, msg string) { e.finish(ok, msg) }

func (e *E2E) finish(ok bool, msg string) {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return
	}
	e.done, e.ok, e.msg = true, ok, msg
	ctx := e.ctx
	e.mu.Unlock()
	if !ok {
		e.Screenshot("failure")
	}
	if ctx != nil {
		go e.win.Quit(ctx)
	}
}

// Screenshot saves the X screen (the window) as <out>/<name>.png.
func (e *E2E) Screenshot(name string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
	path := filepath.Join(e.out, clean+".png")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "import", "-window", "root", path).CombinedOutput(); err != nil {
		e.Log(fmt.Sprintf("screenshot %s failed: %v %s", path, err, out))
		return ""
	}
	e.Log("screenshot " + path)
	return path
}

// Resize sets the window's size (screenshots at narrow and wide sizes).
func (e *E2E) Resize(w, h int) {
	e.mu.Lock()
	ctx := e.ctx
	e.mu.Unlock()
	if ctx != nil {
		e.win.SetSize(ctx, w, h)
		e.win.SetPosition(ctx, 0, 0)
	}
}

// AuditEntry is what the self-test checks in the audit log.
type AuditEntry struct {
	Tool      string `json:"tool"`
	Class     string `json:"class"`
	Decision  string `json:"decision"`
	DecidedBy string `json:"decidedBy"`
	Result    string `json:"result"`
	Error     string `json:"error"`
}

// Audit returns the audit log's entries for a tool, oldest first, and
// whether the hash chain verifies.
func (e *E2E) Audit(tool string) (map[string]any, error) {
	if e.runner == nil {
		return nil, errors.New("no tool runner")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	es, err := e.runner.Audit().List(ctx, audit.Filter{Tool: tool})
	if err != nil {
		return nil, err
	}
	rep, err := e.runner.Audit().Verify(ctx)
	if err != nil {
		return nil, err
	}
	out := []AuditEntry{}
	for _, x := range es {
		out = append(out, AuditEntry{Tool: x.Tool, Class: x.Class, Decision: x.Decision, DecidedBy: x.DecidedBy, Result: x.Result, Error: x.Error})
	}
	return map[string]any{"entries": out, "verify": rep}, nil
}

// WorkspaceFile reads a file the tools wrote in the workspace (name is
// relative to it and stays inside it, e.g. "notes/2026-11-30.md").
func (e *E2E) WorkspaceFile(name string) (string, error) {
	if e.runner == nil {
		return "", errors.New("no tool runner")
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%q is not a path inside the workspace", name)
	}
	b, err := os.ReadFile(filepath.Join(e.runner.Workspace(), name))
	return string(b), err
}

// ReadExport reads a conversation export the window wrote (only files named
// conversation-* directly in the data dir, where this build's exports go).
func (e *E2E) ReadExport(path string) (string, error) {
	if filepath.Dir(path) != filepath.Clean(e.dataDir) || !strings.HasPrefix(filepath.Base(path), "conversation-") {
		return "", fmt.Errorf("%s is not an export in %s", path, e.dataDir)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// ExternalHits counts the inputUrl calls the scripted external agent received.
func (e *E2E) ExternalHits() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.extHit
}

// MarkAt records a milestone (e.g. "first-paint") that happened at epochMs
// (the page's clock: performance.timeOrigin + a timestamp), relative to the
// process start.
func (e *E2E) MarkAt(name string, epochMs float64, source string) int64 {
	d := time.UnixMicro(int64(epochMs * 1000)).Sub(e.started)
	e.mu.Lock()
	e.marks[name] = d
	e.markSrc = source
	e.mu.Unlock()
	e.Log(fmt.Sprintf("%s at %d ms after process start (%s)", name, d.Milliseconds(), source))
	return d.Milliseconds()
}

// MemoryMB returns the memory of this process and its descendants
// (WebKit's web and network processes), in MiB: the sum of their
// proportional set sizes, so pages shared between them count once.
func (e *E2E) MemoryMB() float64 {
	return float64(treeMem(os.Getpid(), "Pss:", "smaps_rollup")) / (1 << 20)
}

// MemoryBreakdown lists each process of the tree with its PSS in MiB.
func (e *E2E) MemoryBreakdown() string {
	var parts []string
	for _, p := range treePIDs(os.Getpid()) {
		name, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "comm"))
		parts = append(parts, fmt.Sprintf("%s=%.0fMB", strings.TrimSpace(string(name)), float64(memOf(p, "Pss:", "smaps_rollup"))/(1<<20)))
	}
	parts = append(parts, "top mappings of this process: "+topMappings(os.Getpid(), 6))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	parts = append(parts, fmt.Sprintf("(go heap in use %.0fMB, go sys %.0fMB)", float64(ms.HeapInuse)/(1<<20), float64(ms.Sys)/(1<<20)))
	return strings.Join(parts, " ")
}

// CheckWebProcessEnv fails unless the web process that runs the page was
// started with the settings of internal/webkit/lean_linux.go: JavaScriptCore's JIT
// off and two malloc arenas, each unless the environment chose otherwise.
func (e *E2E) CheckWebProcessEnv() error {
	if os.Getenv("JARVIS_WEBKIT_LEAN") == "0" {
		return nil
	}
	for _, w := range []struct {
		name, want string
		kept       bool // the user asked to keep WebKit's default
	}{
		{"JSC_useJIT", "0", os.Getenv("JARVIS_WEBKIT_JIT") == "1"},
		{"MALLOC_ARENA_MAX", "2", os.Getenv("GLIBC_TUNABLES") != ""},
	} {
		if w.kept || os.Getenv(w.name) != "" {
			continue
		}
		v, err := webProcessEnv(w.name)
		if err != nil {
			return err
		}
		if v != w.want {
			return fmt.Errorf("the web process has %s=%q, want %q", w.name, v, w.want)
		}
	}
	return nil
}

// webProcessEnv returns the value of the environment variable name in the
// web process under this one ("" when unset).
func webProcessEnv(name string) (string, error) {
	for _, p := range treePIDs(os.Getpid()) {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "comm"))
		if !strings.HasPrefix(string(comm), "WebKitWebProces") {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "environ"))
		if err != nil {
			return "", err
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v, nil
			}
		}
		return "", nil
	}
	return "", errors.New("no WebKit web process under this one")
}

// RSSMB is the plain sum of resident sizes (shared pages counted per process).
func (e *E2E) RSSMB() float64 {
	return float64(treeMem(os.Getpid(), "VmRSS:", "status")) / (1 << 20)
}

// Bench writes the measurements as a Markdown table to <out>/bench.md.
// appendMs are the times of single delta appends at 10,000 messages.
func (e *E2E) Bench(idleMB, idleRSSMB, loadMs float64, appendMs, longMs, wholeMs []float64, longLen int, shown map[string][]float64) (string, error) {
	e.mu.Lock()
	fp, dom, src := e.marks["first-paint"], e.domAt, e.markSrc
	e.mu.Unlock()
	sort.Float64s(appendMs)
	sort.Float64s(longMs)
	sort.Float64s(wholeMs)
	q := func(ms []float64, p float64) float64 {
		if len(ms) == 0 {
			return 0
		}
		return ms[min(len(ms)-1, int(p*float64(len(ms))))]
	}
	verdict := func(ok bool) string {
		if ok {
			return "✅"
		}
		return "❌"
	}
	var b strings.Builder
	b.WriteString("# Desktop measurements (e2e build, Xvfb, WebKitGTK 4.1)\n\n")
	if v, err := webProcessEnv("JSC_useJIT"); err == nil && v == "0" {
		b.WriteString("The page's JavaScript runs without JavaScriptCore's JIT (JSC_useJIT=0 in the web process; JARVIS_WEBKIT_JIT=1 keeps it).\n\n")
	} else {
		b.WriteString("The page's JavaScript runs with JavaScriptCore's JIT.\n\n")
	}
	b.WriteString("| measure | value | goal | met |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| cold start to first paint (process start → %s) | %d ms | < 1000 ms | %s |\n", src, fp.Milliseconds(), verdict(fp > 0 && fp < time.Second))
	fmt.Fprintf(&b, "| process start → DOM ready | %d ms | | |\n", dom.Milliseconds())
	fmt.Fprintf(&b, "| idle memory of this build, with its scripted peers and self-test in the process (app + WebKit processes, PSS) | %.0f MB | the goal is the shipped binary's, below | |\n", idleMB)
	fmt.Fprintf(&b, "| idle memory, plain RSS sum (shared pages counted per process) | %.0f MB | | |\n", idleRSSMB)
	fmt.Fprintf(&b, "| render a 10,000-message transcript | %.0f ms | | |\n", loadMs)
	fmt.Fprintf(&b, "| append a delta at 10,000 messages, median | %.2f ms | < 16 ms | %s |\n", q(appendMs, 0.5), verdict(q(appendMs, 0.5) < 16))
	fmt.Fprintf(&b, "| append a delta at 10,000 messages, p95 (n=%d) | %.2f ms | < 16 ms | %s |\n", len(appendMs), q(appendMs, 0.95), verdict(q(appendMs, 0.95) < 16))
	fmt.Fprintf(&b, "| the same into a long reply (%.1f KB of Markdown), median | %.2f ms | < 16 ms | %s |\n", float64(longLen)/1000, q(longMs, 0.5), verdict(q(longMs, 0.5) < 16))
	fmt.Fprintf(&b, "| the same into a long reply, p95 (n=%d) | %.2f ms | < 16 ms | %s |\n", len(longMs), q(longMs, 0.95), verdict(q(longMs, 0.95) < 16))
	fmt.Fprintf(&b, "| baseline: the long reply rendered whole at every delta, median (n=%d) | %.2f ms | | |\n", len(wholeMs), q(wholeMs, 0.5))
	for _, kb := range []string{"11", "44"} {
		ms, base := shown[kb], shown[kb+"-baseline"]
		sort.Float64s(ms)
		sort.Float64s(base)
		fmt.Fprintf(&b, "| show a whole %s KB reply (opening a session), median (n=%d) | %.2f ms | baseline, marked on the whole text: %.2f ms | |\n", kb, len(ms), q(ms, 0.5), q(base, 0.5))
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "\nLoad average during the run: %s (a loaded machine inflates the start-up and append times).\n", strings.Join(strings.Fields(string(la))[:3], " "))
	}
	b.WriteString("\nMeasured by the e2e build in the real window; the 10,000 messages are synthetic (jarvisBench in the frontend), each append is one\nassistant.delta applied to the last message, rendered (Markdown + sanitize, from the reply's last block on) and laid out.\n")
	path := filepath.Join(e.out, "bench.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	fmt.Print(b.String())
	return path, nil
}

// treeMem sums a kB field (bytes) of /proc/PID/file over pid and its descendants.
func treeMem(pid int, field, file string) int64 {
	var total int64
	for _, p := range treePIDs(pid) {
		total += memOf(p, field, file)
	}
	return total
}

// memOf reads a kB field of /proc/PID/file, in bytes.
func memOf(pid int, field, file string) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// treePIDs returns pid and its descendants.
func treePIDs(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, en := range ents {
		p, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may contain spaces: fields start after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		out = append(out, p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return out
}

// topMappings lists the n mappings of pid with the largest PSS.
func topMappings(pid, n int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps"))
	if err != nil {
		return err.Error()
	}
	agg := map[string]int64{}
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = "[anon]"
			if len(f) >= 6 {
				cur = filepath.Base(f[5])
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			agg[cur] += kb
		}
	}
	type kv struct {
		k string
		v int64
	}
	var all []kv
	for k, v := range agg {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	var out []string
	for i := 0; i < n && i < len(all); i++ {
		out = append(out, fmt.Sprintf("%s=%.0fMB", all[i].k, float64(all[i].v)/1024))
	}
	return strings.Join(out, " ")
}
