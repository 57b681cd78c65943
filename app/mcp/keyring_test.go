package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/internal/testpeer"
	"jarvis/service/secrets"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestKeyringOutsideServerNamespace: "${keyring:oc-key}" in a server's
// headers does not resolve the provider key stored as "oc-key" (the
// secret store Jarvis keeps its provider keys, agent secrets and the audit
// key in); the server is not contacted and fails with a plain error. The
// same name stored for that server resolves.
func TestKeyringOutsideServerNamespace(t *testing.T) {
	env := map[string]string{
		secrets.EnvName("oc-key"):          "sk-provider-key",
		secrets.EnvName("audit-chain-key"): "audit-key",
	}
	var envMu sync.Mutex
	store := secrets.New(func(k string) string { envMu.Lock(); defer envMu.Unlock(); return env[k] })

	var mu sync.Mutex
	var got []string
	peer := testpeer.NewMCPPeer().Server
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return peer }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Api"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	m, err := New(Options{InitTimeout: 10 * time.Second, Backoff: time.Hour, Secret: store.Get})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Apply(m.Trust(Config{Servers: []ServerConfig{{Name: "x", URL: hs.URL + "/mcp", Headers: map[string]string{"X-Api": "${keyring:oc-key}"}}}}))
	waitFor(t, m, "the failure", func() bool { return serverState(m, "x").State == StateFailed })
	mu.Lock()
	sent := strings.Join(got, ",")
	mu.Unlock()
	if strings.Contains(sent, "sk-provider-key") {
		t.Fatalf("the provider key was sent to the MCP server: %q", sent)
	}
	e := serverState(m, "x").Error
	if !strings.Contains(e, `no secret "oc-key" is stored for MCP server "x"`) || !strings.Contains(e, "jarvis mcp secret set x oc-key") {
		t.Fatalf("error %q", e)
	}

	envMu.Lock()
	env[secrets.EnvName(SecretRef("x", "oc-key"))] = "server-own-key"
	envMu.Unlock()
	m.Apply(Config{})
	m.Apply(m.Trust(Config{Servers: []ServerConfig{{Name: "x", URL: hs.URL + "/mcp", Headers: map[string]string{"X-Api": "${keyring:oc-key}"}}}}))
	waitFor(t, m, "the server with its own secret", func() bool { return serverState(m, "x").State == StateReady })
	mu.Lock()
	defer mu.Unlock()
	if got[len(got)-1] != "server-own-key" {
		t.Fatalf("header sent %q", got[len(got)-1])
	}
}
