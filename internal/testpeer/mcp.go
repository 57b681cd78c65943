package testpeer

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPeer is a go-sdk MCP server for tests and benchmarks, served over
// Streamable HTTP (Handler). Its tools:
//
//	echo {text}   returns text
//	wait {}       blocks until the call is cancelled (counted in Cancelled)
//	big {bytes}   returns that many bytes of text
//	rm {path}     marked destructive; returns "removed <path>"
type MCPPeer struct {
	Server    *mcp.Server
	Waiting   atomic.Int32 // wait calls started
	Cancelled atomic.Int32 // wait calls that ended by cancellation
}

type echoIn struct {
	Text string `json:"text"`
}
type bigIn struct {
	Bytes int `json:"bytes"`
}
type rmIn struct {
	Path string `json:"path"`
}
type waitIn struct{}

// NewMCPPeer builds the server.
func NewMCPPeer() *MCPPeer {
	p := &MCPPeer{Server: mcp.NewServer(&mcp.Implementation{Name: "testpeer", Version: "1"}, nil)}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(p.Server, &mcp.Tool{Name: "echo", Description: "Echo the text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(p.Server, &mcp.Tool{Name: "wait", Description: "Wait until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ waitIn) (*mcp.CallToolResult, any, error) {
			p.Waiting.Add(1)
			<-ctx.Done()
			p.Cancelled.Add(1)
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(p.Server, &mcp.Tool{Name: "big", Description: "Return that many bytes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", in.Bytes)), nil, nil
		})
	yes := true
	mcp.AddTool(p.Server, &mcp.Tool{Name: "rm", Description: "Remove a file.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, in rmIn) (*mcp.CallToolResult, any, error) {
			return text("removed " + in.Path), nil, nil
		})
	return p
}

// Handler serves the server over Streamable HTTP.
func (p *MCPPeer) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server }, nil)
}
