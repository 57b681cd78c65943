package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/internal/testpeer"
)

// TestMixedConfigOneBadEntry: a Claude Desktop config used as is, with an
// entry Jarvis cannot run, an unknown key, a dotted name and a legacy
// HTTP+SSE server: the bad entry alone stays stopped with its reason, the
// unknown key is a warning, the dotted name runs under a valid name and is
// shown as written, the SSE server is reached with the legacy transport.
func TestMixedConfigOneBadEntry(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	peer := testpeer.NewMCPPeer().Server
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return peer }, nil))
	t.Cleanup(sse.Close) // after the manager closes its event stream (cleanups run last in, first out)
	fake := map[string]any{"command": exe, "env": map[string]string{"JARVIS_MCP_FAKE": "crash"}}
	withKey := map[string]any{"command": exe, "env": map[string]string{"JARVIS_MCP_FAKE": "crash"}, "autoApprove": []string{"echo"}}
	b, _ := json.Marshal(map[string]any{"globalShortcut": "Ctrl+Space", "mcpServers": map[string]any{
		"good":       fake,
		"github.com": fake,
		"auto":       withKey,
		"bad":        map[string]any{"command": "x", "url": "http://127.0.0.1:1/mcp"},
		"legacy":     map[string]any{"type": "sse", "url": sse.URL},
	}})
	m, _ := startManager(t, string(b), nil)
	waitFor(t, m, "every good entry", func() bool {
		return hasTool(m, "mcp__good__echo") && hasTool(m, "mcp__github_com__echo") && hasTool(m, "mcp__auto__echo") && hasTool(m, "mcp__legacy__echo")
	})
	bad := serverState(m, "bad")
	if bad.State != StateInvalid || !strings.Contains(bad.Error, `server "bad": give either command`) {
		t.Errorf("the bad entry: %+v", bad)
	}
	if s := serverState(m, "github_com"); s.Label != "github.com" {
		t.Errorf("the dotted name is shown as %q", s.Label)
	}
	if s := serverState(m, "auto"); len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `"autoApprove" is not a setting Jarvis knows`) {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s := serverState(m, "legacy"); s.Transport != "sse" {
		t.Errorf("legacy transport %q", s.Transport)
	}
	if _, cerr := m.Servers(); cerr != "" {
		t.Errorf("the file was refused: %s", cerr)
	}
}

// TestVSCodeShape: VS Code's "servers" object (with its "inputs") is read
// as mcpServers is.
func TestVSCodeShape(t *testing.T) {
	exe, _ := os.Executable()
	b, _ := json.Marshal(map[string]any{"inputs": []any{}, "servers": map[string]any{
		"v": map[string]any{"type": "stdio", "command": exe, "env": map[string]string{"JARVIS_MCP_FAKE": "crash"}},
	}})
	m, _ := startManager(t, string(b), nil)
	waitFor(t, m, "the VS Code entry", func() bool { return hasTool(m, "mcp__v__echo") })
}
