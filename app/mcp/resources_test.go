package mcp

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestResourceLinkReadThroughTool: server-everything answers a tool call
// with resource links; the model reads one through the server's
// read_resource tool, which the gate judges like any MCP tool.
func TestResourceLinkReadThroughTool(t *testing.T) {
	m, _ := startManager(t, everythingConfig(t), func(o *Options) { o.Secret = func(string) (string, error) { return "x", nil } })
	waitFor(t, m, "the read_resource tool", func() bool { return hasTool(m, "mcp__every__read_resource") })
	if a := m.Assess("mcp__every__read_resource", json.RawMessage(`{"uri":"demo://x"}`)); a.Risk != "risky" || string(a.Canonical) != `{"uri":"demo://x"}` {
		t.Fatalf("assess: %+v", a)
	}
	if a := m.Assess("mcp__every__read_resource", json.RawMessage(`{"path":"/etc/passwd"}`)); a.Risk != "forbidden" {
		t.Fatalf("bad arguments: %+v", a)
	}
	ctx := context.Background()
	out, err := m.Call(ctx, "l", "mcp__every__get-resource-links", json.RawMessage(`{"count":1}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\[resource link: (\S+) `).FindStringSubmatch(out)
	if link == nil {
		t.Fatalf("no resource link in %q", out)
	}
	uri, _ := json.Marshal(map[string]string{"uri": link[1]})
	got, err := m.Call(ctx, "r", "mcp__every__read_resource", uri, nil)
	if err != nil || !strings.Contains(got, "[resource "+link[1]) {
		t.Fatalf("read %s: %q %v", link[1], got, err)
	}
}
