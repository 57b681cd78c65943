package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/mcp"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

// TestACPAgentsMCPCallsPassTheDesktopsGate: an ACP agent (the scripted
// one, a real go-sdk MCP client) given Jarvis's MCP endpoint calls the
// desktop's MCP tools (a go-sdk server over Streamable HTTP) through it:
// each call is decided by the desktop's gate like a chat agent's — one the
// user allows at the prompt runs and answers, one the user denies is
// refused — and both have their audit row. Then the conversation's mode is
// chosen in the window (app.ChooseForAgent) and the agent is in it.
func TestACPAgentsMCPCallsPassTheDesktopsGate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	d, s, chat := acpMCPCallsThroughTheGate(t, `"SCRIPTED_MCP_HTTP":"1","SCRIPTED_MODES":"1"`, "")

	// The picker's choice, from the window to the running agent.
	c, err := d.app.ChooseForAgent(s.SessionID, "code", "")
	if err != nil || c.Mode != "code" || len(c.Modes) != 3 {
		t.Fatalf("ChooseForAgent = %+v, %v", c, err)
	}
	if _, err := d.app.ChooseForAgent(s.SessionID, "yolo", ""); err == nil || !strings.Contains(err.Error(), "does not offer the mode") {
		t.Fatalf("an unknown mode: %v", err)
	}
	if got := <-chat("mode"); got != "mode=code model=small" {
		t.Fatalf("after choosing code: %q", got)
	}
	if c, err := d.app.AgentChoices(s.SessionID); err != nil || c.Mode != "code" || c.Model != "small" {
		t.Fatalf("AgentChoices = %+v, %v", c, err)
	}
}

// TestACPAgentOverStdioMCPCallsPassTheDesktopsGate: the same for an ACP
// agent that takes MCP servers only over stdio: it is given Jarvis's stdio
// bridge (this test binary run as `jarvis __mcp-bridge`, main_test.go),
// which its go-sdk client starts; the allowed call and the denied call
// are prompted, decided and audited by the desktop as over HTTP.
func TestACPAgentOverStdioMCPCallsPassTheDesktopsGate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	acpMCPCallsThroughTheGate(t, "", `stdio[`)
}

// acpMCPCallsThroughTheGate runs the scripted ACP agent (with agentEnv in
// its environment) on the real desktop with a go-sdk MCP server, has it
// call an allowed tool and a denied one through Jarvis's MCP endpoint, and
// checks the prompts, the answers (each starting with prefix) and the
// audit rows. It returns the desktop, the session and its chat.
func acpMCPCallsThroughTheGate(t *testing.T, agentEnv, prefix string) (*realDesktop, Session, func(string) <-chan string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../service/acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	peer := testpeer.NewMCPPeer()
	hs := httptest.NewServer(peer.Handler())
	t.Cleanup(hs.Close)
	m, err := mcp.New(mcp.Options{InitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "peer", URL: hs.URL, Timeout: 1}}}))
	d := newRealDesktopWith(t, 60, `{"rules":[{"tool":"mcp__peer__echo","action":"allow"}]}`, func(o *ToolRunnerOptions) { o.MCP = m },
		`{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":"`+bin+`","workDir":"{{WS}}","env":{`+agentEnv+`}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go SyncMCPCatalog(ctx, d.c, m, nil, 0)
	testwait.Until(t, "the desktop's MCP tools in the service's catalogue", 20*time.Second, func() bool {
		var cat api.ToolCatalog
		return d.c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat) == nil && len(cat.Tools) == 4
	})
	s, err := d.app.NewSession("coder")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil { // the desktop follows it: its tool requests
		t.Fatal(err)
	}
	chat := func(text string) <-chan string {
		out := make(chan string, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := d.c.Chat(ctx, s.SessionID, text)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			out <- r.Assistant.Parts[0].Text
		}()
		return out
	}

	// A coding agent's context is untrusted (it reads files and the web
	// itself): an MCP call after it asks even where a rule allows the tool,
	// as it would for a chat agent that read untrusted content.
	reply := chat(`mcp mcp__peer__echo {"text":"through Jarvis"}`)
	p := d.waitPrompt(t)
	if p.Tool != "mcp__peer__echo" || string(p.Arguments) != `{"text":"through Jarvis"}` {
		t.Fatalf("prompt %+v", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; !strings.HasPrefix(got, prefix) || !strings.Contains(got, "mcp__peer__echo") || !strings.HasSuffix(got, "error=false result=through Jarvis") {
		t.Fatalf("the allowed call: %q", got)
	}
	e := d.auditRow(t, s.SessionID, "mcp__peer__echo")
	if e.Decision != audit.Allowed || e.DecidedBy != audit.ByUser || e.Result != "through Jarvis" || string(e.Arguments) != `{"text":"through Jarvis"}` {
		t.Fatalf("the allowed call's row %+v", e)
	}

	reply = chat(`mcp mcp__peer__rm {"path":"/etc/hosts"}`)
	p = d.waitPrompt(t)
	if p.Tool != "mcp__peer__rm" || !strings.Contains(p.Description, `MCP server "peer", tool "rm"`) {
		t.Fatalf("prompt %+v", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; !strings.HasPrefix(got, prefix) || !strings.Contains(got, "error=true") || strings.Contains(got, "removed") {
		t.Fatalf("the denied call: %q", got)
	}
	e = d.auditRow(t, s.SessionID, "mcp__peer__rm")
	if e.Decision != audit.Denied || e.DecidedBy != audit.ByUser {
		t.Fatalf("the denied call's row %+v", e)
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
	return d, s, chat
}
