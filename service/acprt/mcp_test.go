package acprt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/api"
	"jarvis/internal/testhttp"
	"jarvis/internal/testwait"
	"jarvis/service/acprt"
	"jarvis/service/catalog"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// An ACP agent reaches the desktop's MCP tools only through Jarvis's MCP
// endpoint: the scripted agent (a real go-sdk MCP client, over Streamable
// HTTP with the token its session was given) lists the tools in its scope
// and calls one; the call is a tool.request of the running turn (the
// desktop's gate: allowed → the desktop's result; denied → the call's
// error). A wrong token is refused.
func TestACPAgentCallsMCPToolsThroughJarvis(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","toolDenylist":["mcp__notes__secret"],
		"chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_MCP_HTTP":"1"}}},
		{"agentId":"plain","displayName":"Plain","chat":{"provider":"acp","command":%q}}],"toolResultTimeoutSeconds":30}`, bin, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	cat := catalog.New()
	if _, err := cat.Set(api.ToolCatalog{Tools: []api.CatalogTool{
		{Name: "mcp__notes__add", Description: "Add a note.", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "mcp__notes__secret", Description: "Out of the agent's scope."},
	}}); err != nil {
		t.Fatal(err)
	}
	var rt *acprt.Runtime
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env.BaseURL = func() string { return srv.URL }
	waiter := toolwait.New(env)
	rt = acprt.New(env, acprt.Options{Waiter: waiter, Catalog: cat,
		Instructions:    func(*config.Config, config.Agent) string { return "" },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(rt.Close)
	for _, r := range rt.Routes() {
		mux.Handle(r.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), r.Handle))
	}
	agent, _ := cfg.Agent("coder")

	for _, tc := range []struct {
		name string
		ok   bool
		want string
	}{
		{"allowed", true, `tools=mcp__notes__add error=false result=note added`},
		{"denied", false, `tools=mcp__notes__add error=true result=the user denied it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt, sess := turntest.Begin(t, env, "coder", `mcp mcp__notes__add {"text":"milk"}`)
			done := make(chan turn.Outcome, 1)
			go func() { done <- rt.Run(context.Background(), tt, sess, agent) }()
			var req api.ToolCall
			testwait.Until(t, "the MCP call's tool.request", 20*time.Second, func() bool {
				for _, ev := range rec.Events() {
					if ev.Type == api.EventToolRequest && json.Unmarshal(ev.Data, &req) == nil && req.TurnID == tt.ID {
						return true
					}
				}
				return false
			})
			r := api.ToolResult{ID: req.ID, OK: tc.ok, Result: "note added"}
			if !tc.ok {
				msg := "the user denied it"
				r.Error = &msg
			}
			if err := waiter.Deliver(context.Background(), sess.ID, r); err != nil {
				t.Fatal(err)
			}
			if string(req.Arguments) != `{"text":"milk"}` || req.Source != "" || req.TurnID != tt.ID || req.Risk != "risky" {
				t.Errorf("tool.request %+v: want the agent's arguments, for the desktop's gate, of this turn", req)
			}
			if o := <-done; o.Fail != nil || o.Final != tc.want {
				t.Fatalf("turn %+v, want %q", o, tc.want)
			}
		})
	}
	testhttp.Fails(t, "POST", srv.URL+acprt.MCPPath, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 401, "unauthorized")

	// An agent that does not take MCP servers over HTTP is told nothing
	// when there is no stdio bridge, and the turn says so.
	plain, _ := cfg.Agent("plain")
	tt, sess := turntest.Begin(t, env, "plain", `mcp mcp__notes__add {}`)
	if o := rt.Run(context.Background(), tt, sess, plain); o.Fail != nil || o.Final != "no MCP server was given" {
		t.Fatalf("turn %+v", o)
	}
	said := false
	for _, st := range statuses(rec.Events(), "agent_status") {
		said = said || strings.Contains(st.Text, "does not take MCP servers over HTTP")
	}
	if !said {
		t.Fatal("no status said the agent was not given Jarvis's MCP tools")
	}
}

// An ACP agent that takes MCP servers only over stdio gets Jarvis's stdio
// bridge (here the test binary run as the bridge, as jarvis runs
// `jarvis __mcp-bridge`), its token in the bridge's environment and not on
// its command line; the agent's go-sdk client starts it, lists the tools
// in its scope and calls one, and the call is a tool.request of the
// running turn (allowed → the desktop's result; denied → the call's
// error). A bridge whose token was revoked (the agent replaced) fails the
// call instead of reaching the desktop.
func TestACPAgentOverStdioCallsMCPToolsThroughTheBridge(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","toolDenylist":["mcp__notes__secret"],
		"chat":{"provider":"acp","command":%q}}],"toolResultTimeoutSeconds":30}`, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	cat := catalog.New()
	if _, err := cat.Set(api.ToolCatalog{Tools: []api.CatalogTool{
		{Name: "mcp__notes__add", Description: "Add a note.", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "mcp__notes__secret", Description: "Out of the agent's scope."},
	}}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env.BaseURL = func() string { return srv.URL }
	waiter := toolwait.New(env)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rt := acprt.New(env, acprt.Options{Waiter: waiter, Catalog: cat, Bridge: acprt.BridgeHelper(self),
		Instructions:    func(*config.Config, config.Agent) string { return "" },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(rt.Close)
	for _, r := range rt.Routes() {
		mux.Handle(r.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), r.Handle))
	}
	agent, _ := cfg.Agent("coder")
	argv := fmt.Sprintf("stdio%q ", acprt.BridgeHelper(self))

	for _, tc := range []struct {
		name string
		ok   bool
		want string
	}{
		{"allowed", true, argv + `tools=mcp__notes__add error=false result=note added`},
		{"denied", false, argv + `tools=mcp__notes__add error=true result=the user denied it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt, sess := turntest.Begin(t, env, "coder", `mcp mcp__notes__add {"text":"milk"}`)
			done := make(chan turn.Outcome, 1)
			go func() { done <- rt.Run(context.Background(), tt, sess, agent) }()
			var req api.ToolCall
			testwait.Until(t, "the MCP call's tool.request", 20*time.Second, func() bool {
				for _, ev := range rec.Events() {
					if ev.Type == api.EventToolRequest && json.Unmarshal(ev.Data, &req) == nil && req.TurnID == tt.ID {
						return true
					}
				}
				return false
			})
			r := api.ToolResult{ID: req.ID, OK: tc.ok, Result: "note added"}
			if !tc.ok {
				msg := "the user denied it"
				r.Error = &msg
			}
			if err := waiter.Deliver(context.Background(), sess.ID, r); err != nil {
				t.Fatal(err)
			}
			if string(req.Arguments) != `{"text":"milk"}` || req.TurnID != tt.ID {
				t.Errorf("tool.request %+v: want the agent's arguments, for the desktop's gate, of this turn", req)
			}
			if o := <-done; o.Fail != nil || o.Final != tc.want {
				t.Fatalf("turn %+v, want %q", o, tc.want)
			}
			for _, st := range statuses(rec.Events(), "agent_status") {
				if strings.Contains(st.Text, "does not take MCP servers") {
					t.Fatalf("status %q: the agent was given the bridge", st.Text)
				}
			}
		})
	}

	// The bridge alone, with a token Jarvis never minted: the endpoint
	// refuses it, and the agent's call fails in words.
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cmd := exec.Command(self, acprt.BridgeSubcommand)
	cmd.Env = append(os.Environ(), acprt.BridgeURLVar+"="+srv.URL+acprt.MCPPath, acprt.BridgeTokenVar+"=jmcp_wrong")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil); err == nil {
		cs.Close()
		t.Fatal("the bridge connected with a wrong token")
	} else if !strings.Contains(err.Error(), "Unauthorized") && !strings.Contains(err.Error(), "wrong MCP token") {
		t.Fatalf("a wrong token: %v", err)
	}
}
