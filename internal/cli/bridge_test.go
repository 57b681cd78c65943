package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/service/acprt"
)

// The hidden `jarvis __mcp-bridge` passes an agent's MCP messages from its
// standard streams to the endpoint and token in its environment (a go-sdk
// server here, which checks the token) and the answers back; at the end of
// its input it ends with 0. Without an endpoint it refuses in words.
func TestMCPBridgeSubcommand(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "jarvis", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echoed"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer jmcp_tok" {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := Env{Stdin: inR, Stdout: outW, Stderr: io.Discard, Getenv: func(k string) string {
		return map[string]string{acprt.BridgeURLVar: hs.URL, acprt.BridgeTokenVar: "jmcp_tok"}[k]
	}}
	done := make(chan int, 1)
	go func() { code, _ := Run([]string{bridgeName}, env); outW.Close(); done <- code }()
	lines := bufio.NewScanner(outR)
	ask := func(msg string) string {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s", msg)
		}
		return lines.Text()
	}
	if got := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}}`); !strings.Contains(got, `"serverInfo":{"name":"jarvis"`) {
		t.Fatalf("initialize: %s", got)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"text":"echoed"`) {
		t.Fatalf("tools/call: %s", got)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("the bridge ended with %d at the end of its input", code)
	}

	code, handled, _, errOut := run(t, bridgeName)
	if !handled || code != 1 || !strings.Contains(errOut, "not by hand") {
		t.Fatalf("without an endpoint: handled %v code %d stderr %q", handled, code, errOut)
	}
	if _, _, out, _ := run(t, "help"); strings.Contains(out, bridgeName) {
		t.Errorf("help lists the hidden bridge:\n%s", out)
	}
}
