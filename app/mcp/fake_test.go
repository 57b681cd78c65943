package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles the test binary as misbehaving stdio MCP servers for
// the fault tests (JARVIS_MCP_FAKE selects one); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("JARVIS_MCP_FAKE"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type dieIn struct{}
type echoIn struct {
	Text string `json:"text"`
}

func fakeServer(mode string) {
	fmt.Fprintln(os.Stderr, "fake server booting:", mode)
	if mark := os.Getenv("JARVIS_MCP_FAKE_MARK"); mark != "" {
		os.WriteFile(mark, []byte("started"), 0o600) // proof that it ran
	}
	switch mode {
	case "exit3": // fails at once, as a server with a bad configuration does
		fmt.Fprintln(os.Stderr, "fake server: config broken")
		os.Exit(3)
	case "hang": // never answers initialize
		time.Sleep(time.Hour)
		return
	case "malformed": // answers initialize with something that is not JSON-RPC
		r := bufio.NewReader(os.Stdin)
		r.ReadString('\n')
		fmt.Println(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":`)
		fmt.Println(`{this is not json}`)
		time.Sleep(time.Hour)
		return
	case "noise": // prints to stdout before initialize, then behaves
		fmt.Println("Secure MCP Filesystem Server running on stdio")
		fmt.Println("")
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Exit mid-call."}, func(context.Context, *sdk.CallToolRequest, dieIn) (*sdk.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "fake server: dying mid-call")
		os.Exit(3)
		return nil, nil, nil
	})
	s.Run(context.Background(), &sdk.StdioTransport{})
}
