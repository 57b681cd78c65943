package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/internal/approved"
)

// peer returns the path of an npm MCP server installed by scripts/setup.sh
// (app/mcp/testdata: npm ci).
func peer(t *testing.T, bin string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed: run scripts/setup.sh (npm ci in app/mcp/testdata): %v", bin, err)
	}
	return p
}

// startManager writes cfg as mcp.json in a temp dir and starts a Manager
// on it.
func startManager(t *testing.T, cfg string, tweak func(*Options)) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := approved.Open(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	// The user approved cfg (tests of what runs unapproved write the file after).
	if err := store.Approve(ApprovedName, []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	opts := Options{ConfigPath: path, StatePath: filepath.Join(dir, "mcp-state.json"), InitTimeout: 20 * time.Second, Backoff: 50 * time.Millisecond, Approved: store}
	if tweak != nil {
		tweak(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, path
}

// waitFor waits (on the manager's change notifications, up to 30 s) until
// cond holds.
func waitFor(t *testing.T, m *Manager, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := m.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			ss, cerr := m.Servers()
			t.Fatalf("timed out waiting for %s; servers %+v; config error %q", what, ss, cerr)
		}
	}
}

func hasTool(m *Manager, name string) bool {
	for _, t := range m.Catalogue() {
		if t.Name == name {
			return true
		}
	}
	return false
}

func serverState(m *Manager, name string) ServerStatus {
	ss, _ := m.Servers()
	for _, s := range ss {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

func everythingConfig(t *testing.T) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"every": map[string]any{"command": peer(t, "mcp-server-everything"), "args": []string{"stdio"}, "env": map[string]string{"EXTRA": "given", "FROM_KEYRING": "${keyring:every-token}"}},
	}})
	return string(b)
}

// TestEverythingServer drives @modelcontextprotocol/server-everything over
// stdio: the catalogue, schema validation and canonical arguments, echo,
// get-sum, structured content, progress of a long-running operation, and
// the child's environment (no Jarvis secrets, the configured variables).
func TestEverythingServer(t *testing.T) {
	t.Setenv("JARVIS_TOKEN", "tok-must-not-leak")
	t.Setenv("JARVIS_SECRET_OPENAI", "sk-must-not-leak")
	m, _ := startManager(t, everythingConfig(t), func(o *Options) {
		o.Secret = func(ref string) (string, error) {
			if ref != SecretRef("every", "every-token") {
				return "", errors.New("no such secret")
			}
			return "resolved-from-keyring", nil
		}
	})
	waitFor(t, m, "the echo tool", func() bool { return hasTool(m, "mcp__every__echo") })
	ctx := context.Background()

	d, ok := m.Definition("mcp__every__echo")
	if !ok || d.Risk != "risky" {
		t.Fatalf("echo definition %+v %v: an MCP tool is risky even with readOnlyHint", d, ok)
	}
	// The prompt's name for people: the server's own title and the tool's.
	if d.Title != "Everything Reference Server › Echo Tool" {
		t.Fatalf("echo's title for people is %q", d.Title)
	}
	if got := friendly("", "get_weather-now"); got != "Get weather now" {
		t.Fatalf("friendly name of get_weather-now: %q", got)
	}
	a := m.Assess("mcp__every__echo", json.RawMessage(`{ "message" : "hi" }`))
	if a.Risk != "risky" || string(a.Canonical) != `{"message":"hi"}` || a.Destructive {
		t.Fatalf("assess echo: %+v", a)
	}
	if a := m.Assess("mcp__every__echo", json.RawMessage(`{"message": 5}`)); a.Risk != "forbidden" || !strings.Contains(a.Reason, "bad arguments") {
		t.Fatalf("a number for a string must be refused by the schema: %+v", a)
	}
	if a := m.Assess("mcp__every__get-sum", json.RawMessage(`{"a":1}`)); a.Risk != "forbidden" {
		t.Fatalf("a missing required argument must be refused: %+v", a)
	}
	if a := m.Assess("mcp__every__nope", json.RawMessage(`{}`)); a.Risk != "forbidden" {
		t.Fatalf("an unknown tool must be forbidden: %+v", a)
	}

	out, err := m.Call(ctx, "c1", "mcp__every__echo", json.RawMessage(`{"message":"hello there"}`), nil)
	if err != nil || !strings.Contains(out, "hello there") {
		t.Fatalf("echo: %q %v", out, err)
	}
	out, err = m.Call(ctx, "c2", "mcp__every__get-sum", json.RawMessage(`{"a":2,"b":40}`), nil)
	if err != nil || !strings.Contains(out, "42") {
		t.Fatalf("get-sum: %q %v", out, err)
	}
	out, err = m.Call(ctx, "c3", "mcp__every__get-structured-content", json.RawMessage(`{"location":"Chicago"}`), nil)
	if err != nil || !strings.Contains(out, "temperature") {
		t.Fatalf("structured content: %q %v", out, err)
	}
	out, err = m.Call(ctx, "c3b", "mcp__every__get-annotated-message", json.RawMessage(`{"messageType":"success","includeImage":true}`), nil)
	if err != nil || !strings.Contains(out, "[image: image/png") || strings.Contains(out, "iVBOR") {
		t.Fatalf("an image is summarized, not passed on: %.300q %v", out, err)
	}
	// Progress notifications arrive on the SDK's goroutines.
	var mu sync.Mutex
	var got []Progress
	out, err = m.Call(ctx, "c4", "mcp__every__trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":3}`), func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("long-running: %q %v", out, err)
	}
	mu.Lock()
	if len(got) == 0 || got[0].Call != "c4" || got[0].Total != 3 {
		t.Fatalf("progress notifications: %+v", got)
	}
	mu.Unlock()
	out, err = m.Call(ctx, "c5", "mcp__every__get-env", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "must-not-leak") || !strings.Contains(out, "EXTRA") || !strings.Contains(out, "resolved-from-keyring") {
		t.Fatalf("the server's environment must lack Jarvis's secrets and carry its configured variables:\n%.2000s", out)
	}
}

// TestFilesystemServer drives @modelcontextprotocol/server-filesystem over
// stdio on a temp folder: reading a file inside works; the server's own
// check refuses a path outside, and that refusal comes back as an error.
func TestFilesystemServer(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("milk, eggs"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": map[string]any{"command": peer(t, "mcp-server-filesystem"), "args": []string{root}},
	}})
	m, _ := startManager(t, string(b), nil)
	waitFor(t, m, "read_text_file", func() bool { return hasTool(m, "mcp__fs__read_text_file") })
	d, _ := m.Definition("mcp__fs__write_file")
	if d.Risk != "risky" {
		t.Fatalf("write_file %+v", d)
	}
	if a := m.Assess("mcp__fs__write_file", json.RawMessage(`{"path":"x","content":"y"}`)); !a.Destructive {
		t.Fatalf("write_file must be destructive (its destructiveHint, or the spec's default): %+v", a)
	}
	out, err := m.Call(context.Background(), "c", "mcp__fs__read_text_file", json.RawMessage(`{"path":`+strconvQuote(filepath.Join(root, "notes.md"))+`}`), nil)
	if err != nil || !strings.Contains(out, "milk, eggs") {
		t.Fatalf("read: %q %v", out, err)
	}
	_, err = m.Call(context.Background(), "c", "mcp__fs__read_text_file", json.RawMessage(`{"path":"/etc/passwd"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "the tool reported an error") {
		t.Fatalf("outside its roots: %v", err)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
