package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/app/mcp"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

// mcpDesktop is the real service and desktop with the MCP tools of a go-sdk
// server (internal/testpeer's MCPPeer) over Streamable HTTP, its catalogue
// sent to the service.
func mcpDesktop(t *testing.T, policy string) (*realDesktop, *testpeer.MCPPeer) {
	t.Helper()
	d, peer, _ := mcpDesktopManager(t, policy)
	return d, peer
}

func mcpDesktopManager(t *testing.T, policy string) (*realDesktop, *testpeer.MCPPeer, *mcp.Manager) {
	t.Helper()
	peer := testpeer.NewMCPPeer()
	hs := httptest.NewServer(peer.Handler())
	t.Cleanup(hs.Close)
	m, err := mcp.New(mcp.Options{InitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "peer", URL: hs.URL, Timeout: 1}}}))
	d := newRealDesktopWith(t, 60, policy, func(o *ToolRunnerOptions) { o.MCP = m })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go SyncMCPCatalog(ctx, d.c, m, nil, 0)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var cat api.ToolCatalog
		if err := d.c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
			t.Fatal(err)
		}
		if len(cat.Tools) == 4 {
			break
		}
		if time.Now().After(deadline) {
			ss, cerr := m.Servers()
			t.Fatalf("the service's catalogue has %d tools; servers %+v %q", len(cat.Tools), ss, cerr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return d, peer, m
}

// auditRow waits for the audit row of the session's call to tool.
func (d *realDesktop) auditRow(t *testing.T, sessionID, tool string) audit.Entry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		es, err := d.runner.Audit().List(context.Background(), audit.Filter{SessionID: sessionID, Tool: tool})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) > 0 {
			return es[len(es)-1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no audit row for %s", tool)
	return audit.Entry{}
}

// finalText waits for the turn's last assistant message.
func (d *realDesktop) finalText(t *testing.T, sessionID, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		tr, err := d.app.s.messages(context.Background(), sessionID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.Messages {
			if m.Role == "assistant" && strings.Contains(m.Text, "Tool results:") {
				last = m.Text
			}
		}
		if strings.Contains(last, want) {
			return last
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the model never read %q; last answer %q", want, last)
	return ""
}

func (d *realDesktop) session(t *testing.T) string {
	t.Helper()
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	return s.SessionID
}

// TestMCPCallAllowedByRule: a scripted model's call of an MCP tool reaches
// the desktop as tool.request, a user rule allows it, the server answers,
// the model reads the result, and the audit row says so.
func TestMCPCallAllowedByRule(t *testing.T) {
	d, _ := mcpDesktop(t, `{"rules":[{"tool":"mcp__peer__echo","action":"allow"}]}`)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__echo {"text":"from the peer"}]]`); err != nil {
		t.Fatal(err)
	}
	e := d.auditRow(t, sid, "mcp__peer__echo")
	if e.Decision != audit.Allowed || e.DecidedBy != audit.ByPolicy || e.Class != "risky" || e.Result != "from the peer" || string(e.Arguments) != `{"text":"from the peer"}` {
		t.Fatalf("row %+v", e)
	}
	d.finalText(t, sid, "from the peer")
}

// TestMCPCallPromptedAndApproved: without a rule an MCP tool prompts even
// though its server calls it read-only; the prompt names the server and the
// tool; approved, it runs.
func TestMCPCallPromptedAndApproved(t *testing.T) {
	d, _ := mcpDesktop(t, "")
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__echo {"text":"approved"}]]`); err != nil {
		t.Fatal(err)
	}
	p := d.waitPrompt(t)
	if p.Tool != "mcp__peer__echo" || !strings.Contains(p.Description, `MCP server "peer", tool "echo"`) || string(p.Arguments) != `{"text":"approved"}` || p.Risk != "risky" {
		t.Fatalf("prompt %+v", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	e := d.auditRow(t, sid, "mcp__peer__echo")
	if e.Decision != audit.Allowed || e.DecidedBy != audit.ByUser || e.Result != "approved" {
		t.Fatalf("row %+v", e)
	}
	d.finalText(t, sid, "approved")
}

// TestMCPCallDenied: a destructive MCP tool prompts with only once/deny;
// denied, the model reads the denial and the row records it.
func TestMCPCallDenied(t *testing.T) {
	d, _ := mcpDesktop(t, "")
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__rm {"path":"notes.md"}]]`); err != nil {
		t.Fatal(err)
	}
	p := d.waitPrompt(t)
	if !p.Destructive || len(p.Choices) != 2 || p.Choices[0] != gate.Once || p.Choices[1] != gate.Refuse {
		t.Fatalf("a destructive MCP tool's prompt offers once/deny only: %+v", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	e := d.auditRow(t, sid, "mcp__peer__rm")
	if e.Decision != audit.Denied || e.DecidedBy != audit.ByUser || e.Result != "" {
		t.Fatalf("row %+v", e)
	}
	d.finalText(t, sid, "denied")
}

// TestMCPCallTimedOut: a call the server never answers ends at the
// server's timeout; the server is sent notifications/cancelled (its
// handler's context ends) and the row records the error.
func TestMCPCallTimedOut(t *testing.T) {
	d, peer := mcpDesktop(t, `{"rules":[{"tool":"mcp__peer__wait","action":"allow"}]}`)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__wait {}]]`); err != nil {
		t.Fatal(err)
	}
	e := d.auditRow(t, sid, "mcp__peer__wait")
	if e.Decision != audit.Allowed || !strings.Contains(e.Error, "no answer from MCP server \"peer\" within 1s") {
		t.Fatalf("row %+v", e)
	}
	d.finalText(t, sid, "within 1s")
	deadline := time.Now().Add(10 * time.Second)
	for peer.Cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if peer.Cancelled.Load() != 1 {
		t.Fatal("the server's handler was never cancelled")
	}
}

// TestMCPBadArgumentsForbidden: arguments that fail the tool's schema are
// refused before any prompt, whatever the rules say.
func TestMCPBadArgumentsForbidden(t *testing.T) {
	d, _ := mcpDesktop(t, `{"rules":[{"tool":"mcp__*","action":"allow"}]}`)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__big {"bytes":"many"}]]`); err != nil {
		t.Fatal(err)
	}
	e := d.auditRow(t, sid, "mcp__peer__big")
	if e.Decision != audit.Denied || e.Class != "forbidden" || !strings.Contains(e.Reason, "bad arguments") {
		t.Fatalf("row %+v", e)
	}
}

// TestHeadlessHostsMCP: `jarvis --headless` runs MCP tools through the same
// gate: a rule allows one, a call that would prompt is denied as headless.
func TestHeadlessHostsMCP(t *testing.T) {
	d, _, m := mcpDesktopManager(t, "")
	Shutdown(d.app) // one gate per service: the window goes away
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o700)
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"mcp__peer__echo","action":"allow"}]}`), 0o600)
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: policy, Headless: true, MCP: m})
	if err != nil {
		t.Fatal(err)
	}
	runHeadless(t, d.c, runner)
	r, err := d.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j_headless_mcp"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.c.Chat(context.Background(), r.GeneralSessionID, `[[tool mcp__peer__echo {"text":"no window"}]] [[tool mcp__peer__big {"bytes":3}]]`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Assistant.Text(), "no window") {
		t.Fatalf("reply %+v", res)
	}
	rows := map[string]audit.Entry{}
	es, _ := runner.Audit().List(context.Background(), audit.Filter{})
	for _, e := range es {
		rows[e.Tool] = e
	}
	if e := rows["mcp__peer__echo"]; e.Decision != audit.Allowed || e.DecidedBy != audit.ByPolicy {
		t.Fatalf("echo %+v", e)
	}
	if e := rows["mcp__peer__big"]; e.Decision != audit.Denied || e.DecidedBy != audit.ByHeadless {
		t.Fatalf("big %+v", e)
	}
}

// TestMCPStopCancelsTheCall: Stop while an MCP call runs cancels it: the
// server gets notifications/cancelled (its handler's context ends) well
// before the call's timeout, and the row records the cancellation.
func TestMCPStopCancelsTheCall(t *testing.T) {
	d, peer := mcpDesktop(t, `{"rules":[{"tool":"mcp__peer__wait","action":"allow"}]}`)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__peer__wait {}]]`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for peer.Waiting.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if ok, err := d.app.Cancel(sid); err != nil || !ok {
		t.Fatalf("cancel %v %v", ok, err)
	}
	// The gate's row (the call ran and was cancelled), then the row of its
	// undelivered result (the service had given up on it), appended after
	// the first: wait for both.
	var es []audit.Entry
	var err error
	testwait.Until(t, "two audit rows of the cancelled call", 20*time.Second, func() bool {
		es, err = d.runner.Audit().List(context.Background(), audit.Filter{SessionID: sid, Tool: "mcp__peer__wait"})
		return err != nil || len(es) >= 2
	})
	if err != nil || len(es) != 2 || !strings.Contains(es[0].Error, "mcp__peer__wait: cancelled") || es[0].Decision != audit.Allowed || es[1].Decision != audit.Withdrawn {
		t.Fatalf("rows %+v %v", es, err)
	}
	deadline = time.Now().Add(5 * time.Second) // the notification is sent asynchronously
	for peer.Cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if peer.Cancelled.Load() != 1 {
		t.Fatal("the server's handler was not cancelled")
	}
}
