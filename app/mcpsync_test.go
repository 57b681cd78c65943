package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/mcp"
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
