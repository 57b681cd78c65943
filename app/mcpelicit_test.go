package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/app/mcp"
)

// everythingManager runs @modelcontextprotocol/server-everything (stdio)
// as the server "every".
func everythingManager(t *testing.T) *mcp.Manager {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join("mcp", "testdata", "node_modules", ".bin", "mcp-server-everything"))
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("mcp-server-everything is not installed: run scripts/setup.sh (npm ci in app/mcp/testdata): %v", err)
	}
	m, err := mcp.New(mcp.Options{InitTimeout: 60 * time.Second, Backoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "every", Label: "every", Command: bin, Args: []string{"stdio"}}}}))
	return m
}

func waitTool(t *testing.T, m *mcp.Manager, name string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		ch := m.Changed()
		for _, x := range m.Catalogue() {
			if x.Name == name {
				return
			}
		}
		select {
		case <-ch:
		case <-deadline:
			ss, _ := m.Servers()
			t.Fatalf("timed out waiting for %s: %+v", name, ss)
		}
	}
}

// TestMCPElicitationInTheWindow: server-everything's elicitation request
// reaches the window as a dialog (the server's name, its message and the
// schema of the fields asked for); the user's answer goes back to the
// server: the content typed, a decline, and a request the server gave up
// on is taken away from the window.
func TestMCPElicitationInTheWindow(t *testing.T) {
	m := everythingManager(t)
	events := make(chan [2]any, 8)
	p := NewMCPPanel(m, func(name string, v any) {
		if strings.HasPrefix(name, "mcp:elicit") {
			events <- [2]any{name, v}
		}
	})
	const tool = "mcp__every__trigger-elicitation-request"
	waitTool(t, m, tool)

	ask := func(ctx context.Context) (<-chan string, MCPElicitation) {
		out := make(chan string, 1)
		go func() {
			r, err := m.Call(ctx, "e", tool, json.RawMessage(`{}`), nil)
			if err != nil {
				r = "error: " + err.Error()
			}
			out <- r
		}()
		select {
		case ev := <-events:
			if ev[0] != "mcp:elicit" {
				t.Fatalf("event %v", ev)
			}
			return out, ev[1].(MCPElicitation)
		case <-time.After(60 * time.Second):
			t.Fatal("no elicitation reached the window")
		}
		return nil, MCPElicitation{}
	}

	out, e := ask(context.Background())
	schema, _ := json.Marshal(e.Schema)
	if e.Server != "every" || e.Mode != "form" || !strings.Contains(e.Message, "Please provide inputs") ||
		!strings.Contains(string(schema), `"required":["name"]`) || !strings.Contains(string(schema), `"format":"email"`) {
		t.Fatalf("the dialog: %+v %s", e, schema)
	}
	if err := p.MCPElicitAnswer(e.ID, "accept", map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}); err != nil {
		t.Fatal(err)
	}
	if r := <-out; !strings.Contains(r, "- Name: Ada Lovelace") || !strings.Contains(r, "- Favorite Integer: 7") {
		t.Fatalf("accepted: %q", r)
	}
	if err := p.MCPElicitAnswer(e.ID, "accept", nil); err == nil {
		t.Fatal("a second answer to the same request was taken")
	}

	out, e = ask(context.Background())
	if err := p.MCPElicitAnswer(e.ID, "decline", map[string]any{"name": "not sent"}); err != nil {
		t.Fatal(err)
	}
	if r := <-out; !strings.Contains(r, "declined") || strings.Contains(r, "not sent") {
		t.Fatalf("declined: %q", r)
	}

	// The server is stopped while it waits for an answer: the dialog is
	// taken away.
	out, e = ask(context.Background())
	if err := m.Restart("every"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev[0] != "mcp:elicit-done" || ev[1] != e.ID {
			t.Fatalf("after the server stopped: %v", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the dialog of a stopped server stayed")
	}
	<-out
}
