package app

import (
	"context"
	"fmt"
	"os"
	"testing"

	"jarvis/service/acprt"
)

// TestMain also runs the stdio MCP bridge when the test binary is started
// as one, as jarvis runs `jarvis __mcp-bridge`: the real desktops of these
// tests give its argv to their service (testBridge), and ACP agents that
// take MCP servers only over stdio start it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == acprt.BridgeSubcommand {
		if err := acprt.Bridge(context.Background(), os.Getenv, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bridge:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testBridge is the stdio MCP bridge's argv: this test binary.
func testBridge(t *testing.T) []string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return acprt.BridgeHelper(self)
}
