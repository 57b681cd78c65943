package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestElicitationDeclinedAndLogged: server-everything asks for the user's
// input; with no one to ask (headless) the request is declined, the server
// says so, and the log names the server and what it asked.
func TestElicitationDeclinedAndLogged(t *testing.T) {
	var logs syncBuffer
	m, _ := startManager(t, everythingConfig(t), func(o *Options) {
		o.Secret = func(string) (string, error) { return "x", nil }
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	waitFor(t, m, "the elicitation tool", func() bool { return hasTool(m, "mcp__every__trigger-elicitation-request") })
	out, err := m.Call(context.Background(), "e", "mcp__every__trigger-elicitation-request", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(out, "declined") {
		t.Fatalf("elicitation: %q %v", out, err)
	}
	if l := logs.String(); !strings.Contains(l, "asked for the user's input; declined") || !strings.Contains(l, "server=every") {
		t.Fatalf("log:\n%s", l)
	}
}
