package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/gate"
	"jarvis/app/mcp"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
	"jarvis/service"
	"jarvis/service/config"
)

// TestMCPCatalogAfterServiceRestart: the service restarts (a new process
// on the same data dir and address) while the desktop stays attached; its
// catalogue starts empty, and the desktop sends its MCP tools again
// without any change on its side.
func TestMCPCatalogAfterServiceRestart(t *testing.T) {
	cfg, err := config.Parse("c.json", []byte(`{"agents":[{"agentId":"general","displayName":"General"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	start := func() *service.Service {
		svc, err := service.New(context.Background(), service.Options{DataDir: data, Config: cfg, Token: realToken})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	var h atomic.Pointer[http.Handler]
	svc := start()
	first := svc.Handler()
	h.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	defer srv.Close()

	peer := httptest.NewServer(testpeer.NewMCPPeer().Handler())
	defer peer.Close()
	m, err := mcp.New(mcp.Options{InitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "peer", URL: peer.URL}}}))
	c := api.NewClient(srv.URL, realToken, &http.Client{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go SyncMCPCatalog(ctx, c, m, nil, 50*time.Millisecond)
	count := func() int {
		var cat api.ToolCatalog
		if err := c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
			return -1
		}
		return len(cat.Tools)
	}
	testwait.Until(t, "the catalogue on the first service", 20*time.Second, func() bool { return count() == 4 })

	svc.Close()
	svc = start() // the restarted service: an empty catalogue
	defer svc.Close()
	second := svc.Handler()
	h.Store(&second)
	testwait.Until(t, "the catalogue sent again to the restarted service", 20*time.Second, func() bool { return count() == 4 })
}

// TestMCPCatalogResentOnStreamReconnect: the real jarvis-service restarts
// on the same address while the desktop follows a session; the desktop's
// stream reconnects and its MCP tools are sent again at once, without the
// periodic check (here an hour) having to notice.
func TestMCPCatalogResentOnStreamReconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jarvis-service")
	}
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, []byte(`{"agents":[{"agentId":"general","displayName":"General"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	start := func(addr string) *proc.Proc {
		p, err := proc.Start(bin, []string{"--addr", addr, "--data-dir", data, "--trust-config", "--config", cfgPath, "--log-level", "error"},
			[]string{"JARVIS_TOKEN=" + realToken}, false)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	svc := start("127.0.0.1:0")
	u, err := url.Parse(svc.URL)
	if err != nil {
		t.Fatal(err)
	}

	peer := httptest.NewServer(testpeer.NewMCPPeer().Handler())
	defer peer.Close()
	m, err := mcp.New(mcp.Options{InitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "peer", URL: peer.URL}}}))
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: t.TempDir(), AuditPath: filepath.Join(dir, "audit.db"),
		PolicyPath: filepath.Join(dir, "policy.json"), MCP: m, Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	c := api.NewClient(svc.URL, realToken, &http.Client{})
	a, err := New(Options{Client: c, StreamClient: api.NewClient(svc.URL, realToken, NewStreamHTTPClient()),
		Emit: func(string, any) {}, Tools: runner, Prompts: runner.Prompts(), Audit: runner.Audit(),
		Follow: FollowOptions{FirstRetry: 50 * time.Millisecond, MaxRetry: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer Shutdown(a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go SyncMCPCatalog(ctx, c, m, nil, time.Hour)
	count := func() int {
		var cat api.ToolCatalog
		if err := c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
			return -1
		}
		return len(cat.Tools)
	}
	testwait.Until(t, "the catalogue on the first service", 20*time.Second, func() bool { return count() == 4 })
	s, err := a.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}

	if err := svc.Stop(); err != nil {
		t.Logf("first service: %v", err)
	}
	svc = start(u.Host) // the restarted service: an empty catalogue
	defer svc.Stop()
	testwait.Until(t, "the catalogue sent again to the restarted service", 20*time.Second, func() bool { return count() == 4 })
}

// TestMCPOpenConfig: the panel's "Open mcp.json" hands the file's path to
// the desktop's default handler (a recording xdg-open here), and says in
// words when there is no file yet.
func TestMCPOpenConfig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake handler is a shell script named xdg-open")
	}
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	m, err := mcp.New(mcp.Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: t.TempDir(), AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: filepath.Join(dir, "policy.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	p := NewMCPPanel(m, func(string, any) {})
	if err := p.MCPOpenConfig(); err == nil || err.Error() != "this window cannot open files" {
		t.Fatalf("without an opener: %v", err)
	}
	WithOpener(p, runner.OpenPath)
	if err := p.MCPOpenConfig(); err == nil || !strings.Contains(err.Error(), "does not exist yet: add a server here first") {
		t.Fatalf("no file yet: %v", err)
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.MCPOpenConfig(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "xdg-open given mcp.json", 10*time.Second, func() bool {
		b, _ := os.ReadFile(opened)
		return string(b) == cfg
	})
}
