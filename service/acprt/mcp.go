package acprt

// Jarvis's MCP tools for ACP agents, under one policy: each ACP agent's
// sessions are given Jarvis's own MCP endpoint (POST /acp/mcp on the
// loopback service, Streamable HTTP, stateless) with a bearer token of its
// own, minted per Jarvis session and kept only as its hash (an agent that
// takes MCP servers only over stdio gets the stdio bridge instead,
// bridge.go, with the same token). The endpoint
// lists the desktop's MCP tools (service/catalog) in the agent's scope, and
// each tools/call becomes a tool.request of the session's running turn,
// like a chat agent's MCP call: the desktop's gate decides it, runs it and
// writes its audit row; a denial is the call's error.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/service/acpagent"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/prompt"
	"jarvis/service/turn"
)

// MCPPath is Jarvis's MCP endpoint for ACP agents. It is outside /v1/:
// the agent never gets the service's token, only its session's own.
const MCPPath = "/acp/mcp"

// mcpName is the name the agent knows the endpoint by.
const mcpName = "jarvis"

// grant is what one MCP token reaches: one Jarvis session's turns, with
// its agent's tool scope.
type grant struct {
	sessionID string
	agentID   string
}

// mcpState is the endpoint's state: the live grants by token hash and
// each session's running turn.
type mcpState struct {
	mu     sync.Mutex
	grants map[string]grant      // token hash -> grant
	turns  map[string]*turn.Turn // session -> its running turn
	http   *mcp.StreamableHTTPHandler
}

type grantKey struct{}

// mcpFor mints the session's MCP token and returns the server entry an
// agent is given and the token's hash (to revoke it), or nothing when the
// runtime has no catalogue or the service's own address is not known yet
// (the caller gives it only while the catalogue has tools).
func (rt *Runtime) mcpFor(sessionID string, agent config.Agent) ([]acpagent.MCPServer, string) {
	if rt.opts.Catalog == nil || rt.env.BaseURL == nil {
		return nil, ""
	}
	base := rt.env.BaseURL()
	if base == "" {
		rt.env.Log.Info("acp: the service's address is not known yet: no MCP endpoint for the agent", "session", sessionID)
		return nil, ""
	}
	tok, hash, err := callback.NewToken("jmcp_")
	if err != nil {
		rt.env.Log.Error("acp: mint an MCP token", "err", err)
		return nil, ""
	}
	rt.mcp.mu.Lock()
	if rt.mcp.grants == nil {
		rt.mcp.grants = map[string]grant{}
	}
	rt.mcp.grants[hash] = grant{sessionID: sessionID, agentID: agent.AgentID}
	rt.mcp.mu.Unlock()
	srv := acpagent.MCPServer{Name: mcpName, URL: strings.TrimSuffix(base, "/") + MCPPath, Headers: map[string]string{"Authorization": "Bearer " + tok}}
	if len(rt.opts.Bridge) > 0 { // the token by environment, never on the command line
		srv.Bridge = &acpagent.StdioServer{Command: rt.opts.Bridge[0], Args: rt.opts.Bridge[1:],
			Env: map[string]string{BridgeURLVar: srv.URL, BridgeTokenVar: tok}}
	}
	return []acpagent.MCPServer{srv}, hash
}

// revoke ends a token: its agent was stopped or replaced.
func (rt *Runtime) revoke(hash string) {
	if hash == "" {
		return
	}
	rt.mcp.mu.Lock()
	delete(rt.mcp.grants, hash)
	rt.mcp.mu.Unlock()
}

// running records t as its session's running turn until done is called.
func (rt *Runtime) running(t *turn.Turn) (done func()) {
	rt.mcp.mu.Lock()
	if rt.mcp.turns == nil {
		rt.mcp.turns = map[string]*turn.Turn{}
	}
	rt.mcp.turns[t.SessionID] = t
	rt.mcp.mu.Unlock()
	return func() {
		rt.mcp.mu.Lock()
		if rt.mcp.turns[t.SessionID] == t {
			delete(rt.mcp.turns, t.SessionID)
		}
		rt.mcp.mu.Unlock()
	}
}

// handleMCP is POST (GET, DELETE) /acp/mcp: the session's token, then
// go-sdk's Streamable HTTP handler.
func (rt *Runtime) handleMCP(w http.ResponseWriter, r *http.Request) error {
	max := rt.env.Config().MaxBodyBytes
	if r.ContentLength > max {
		return httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over %d bytes", max)
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	rt.mcp.mu.Lock()
	g, found := rt.mcp.grants[callback.HashToken(tok)]
	h := rt.mcp.http
	if h == nil {
		h = mcp.NewStreamableHTTPHandler(rt.mcpServer, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		rt.mcp.http = h
	}
	rt.mcp.mu.Unlock()
	if !ok || tok == "" || !found {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jarvis-mcp"`)
		return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong MCP token")
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	return nil
}

// mcpServer is the MCP server one request sees: the catalogue's tools in
// its agent's scope, each call sent to the desktop's gate.
func (rt *Runtime) mcpServer(r *http.Request) *mcp.Server {
	g, _ := r.Context().Value(grantKey{}).(grant)
	srv := mcp.NewServer(&mcp.Implementation{Name: "jarvis", Version: "1"}, nil)
	agent, ok := rt.env.Config().Agent(g.agentID)
	if !ok {
		return srv // the agent was removed from the config: no tools
	}
	for _, d := range rt.opts.Catalog.Definitions() {
		if !prompt.ToolInScope(agent, d.Name, d.Capabilities) {
			continue
		}
		name, risk := d.Name, string(d.Risk)
		srv.AddTool(&mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: json.RawMessage(d.Parameters)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return rt.callTool(ctx, g, agent, name, risk, req.Params.Arguments), nil
			})
	}
	return srv
}

// callTool sends one tools/call to the desktop as a tool.request of the
// session's running turn and returns its result (a denial or failure as
// the call's error).
func (rt *Runtime) callTool(ctx context.Context, g grant, agent config.Agent, name, risk string, args json.RawMessage) *mcp.CallToolResult {
	rt.mcp.mu.Lock()
	t := rt.mcp.turns[g.sessionID]
	rt.mcp.mu.Unlock()
	if t == nil {
		return toolError(errors.New("no turn of this conversation is running: Jarvis's tools can be called only during a turn"))
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	r := rt.opts.Waiter.Ask(ctx, t, name, args, risk, agent.DisplayName+" calls an MCP tool", "", "")
	if err := resultErr(r); err != nil {
		return toolError(err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Result}}}
}

func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}
