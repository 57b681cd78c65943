package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/approved"
	"jarvis/service"
)

// TestWindowApprovesAChangedConfig: the window is told what a config file
// changed outside Jarvis would start and where it would connect, and its
// Approve applies exactly that content; a file swapped after it was shown
// is refused in plain words.
func TestWindowApprovesAChangedConfig(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.json")
	write := func(s string) {
		if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"agents":[{"agentId":"general"}]}`)
	store, err := approved.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, warning, err := service.LoadConfig(cfgPath, store)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: realToken,
		ConfigPath: cfgPath, Approved: store, ConfigWarning: warning})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	a, err := New(Options{Client: api.NewClient(srv.URL, realToken, &http.Client{}), Emit: func(string, any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(a) })

	in := a.Info()
	if in.PendingConfig == nil || !strings.Contains(in.Warning, "not applied until you approve it") {
		t.Fatalf("a config written by hand before the first start: %+v", in)
	}
	// Swapped after it was shown: refused, nothing applied.
	shown := in.PendingConfig.Hash
	write(`{"agents":[{"agentId":"general"},{"agentId":"x","chat":{"provider":"openai-compatible","baseUrl":"http://127.0.0.1:9/v1","model":"m"}}]}`)
	if err := a.ApproveConfig(shown); err == nil || !strings.Contains(err.Error(), "changed after it was shown") {
		t.Fatalf("approval of a swapped file: %v", err)
	}
	in = a.Info()
	if in.PendingConfig == nil || in.PendingConfig.Hash == shown || !strings.Contains(strings.Join(in.PendingConfig.Lines, "\n"), "connects to http://127.0.0.1:9/v1") {
		t.Fatalf("after the swap: %+v", in.PendingConfig)
	}
	if err := a.ApproveConfig(in.PendingConfig.Hash); err != nil {
		t.Fatal(err)
	}
	ags, err := a.Agents()
	if err != nil {
		t.Fatal(err)
	}
	if in := a.Info(); in.PendingConfig != nil || in.Warning != "" || len(ags) != 2 {
		t.Fatalf("after approval: %+v, agents %+v", in, ags)
	}
}
