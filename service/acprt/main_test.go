package acprt_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"jarvis/service/acprt"
)

// TestMain also runs the stdio MCP bridge when the test binary is started
// as one (acprt.BridgeHelper(os.Args[0])), as jarvis and jarvis-service
// run it: the agents in these tests start it as their stdio MCP server.
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
