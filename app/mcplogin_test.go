package app

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/app/mcp"
	"jarvis/internal/testpeer"
	"jarvis/service/secrets"
)

// TestMCPLoginCommand: `jarvis mcp login SERVER` in a terminal prints the
// authorization URL; a browser that opens it signs the user in and the
// sign-in is stored with the server's secrets; `logout` forgets it.
func TestMCPLoginCommand(t *testing.T) {
	as, err := testpeer.NewAuthServer(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	p := testpeer.NewProtectedMCP(as)
	defer p.Close()
	dir := t.TempDir()
	data, cfg := filepath.Join(dir, "data"), filepath.Join(dir, "mcp.json")
	os.MkdirAll(data, 0o700)
	os.WriteFile(cfg, []byte(`{"mcpServers":{"remote.example":{"url":"`+p.URL+`"}}}`), 0o600)
	store := secrets.New(func(string) string { return "" }, secrets.WithFile(filepath.Join(dir, "secrets.json"), nil))
	ref := mcp.SecretRef("remote_example", mcp.OAuthSecret)
	defer store.Delete(ref)

	run := func(args ...string) (int, string, string) {
		pr, pw := io.Pipe()
		var out strings.Builder
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the terminal, and the user who opens the printed address
			defer wg.Done()
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "http") {
					if err := testpeer.Browser(u); err != nil {
						t.Errorf("the browser: %v", err)
					}
				}
			}
		}()
		var errOut strings.Builder
		code := MCPCommand(append(args, "--data-dir", data, "--mcp-config", cfg), MCPCommandOptions{
			DefaultDataDir: func() (string, error) { return data, nil }, DefaultMCPConfig: func() (string, error) { return cfg, nil },
			Secret: store.Get, SetSecret: store.Set, Stdin: strings.NewReader(""), Stdout: pw, Stderr: &errOut,
		})
		pw.Close()
		wg.Wait()
		return code, out.String(), errOut.String()
	}

	code, out, e := run("login", "remote.example")
	if code != 0 || !strings.Contains(out, "open this address in a browser") || !strings.Contains(out, as.URL+"/authorize?") || !strings.Contains(out, "signed in to remote.example") {
		t.Fatalf("login: %d\n%s%s", code, out, e)
	}
	raw, err := store.Get(ref)
	var rec struct {
		ClientID string `json:"client_id"`
		Token    struct {
			RefreshToken string `json:"refresh_token"`
		} `json:"token"`
	}
	if err != nil || json.Unmarshal([]byte(raw), &rec) != nil || rec.ClientID == "" || rec.Token.RefreshToken == "" {
		t.Fatalf("stored sign-in: %q %v", raw, err)
	}
	if code, out, e := run("logout", "remote.example"); code != 0 || !strings.Contains(out, "signed out of remote.example") {
		t.Fatalf("logout: %d\n%s%s", code, out, e)
	}
	if raw, _ := store.Get(ref); strings.Contains(raw, "refresh_token") {
		t.Fatalf("after logout the sign-in is still stored: %q", raw)
	}
	if code, _, e := run("login", "nope"); code != 1 || !strings.Contains(e, `no server "nope"`) {
		t.Fatalf("an unknown server: %d %s", code, e)
	}
}
