package mcp

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStartFailureCause: a server that cannot start says why at once (not
// as an initialize timeout): a crash with its exit status and stderr, a
// refused connection, an HTTP 401 (Unauthorized).
func TestStartFailureCause(t *testing.T) {
	slow := func(o *Options) { o.InitTimeout = 20 * time.Second; o.Backoff = time.Hour }

	m, _ := startManager(t, fakeConfig(t, "dies", "exit3"), slow)
	waitFor(t, m, "the crash", func() bool { return serverState(m, "dies").State == StateFailed })
	e := serverState(m, "dies").Error
	if strings.Contains(e, "did not finish initialize") || !strings.Contains(e, "exit status 3") || !strings.Contains(e, "fake server: config broken") {
		t.Errorf("a crash at start: %q", e)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	unauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "missing token", http.StatusUnauthorized)
	}))
	defer unauth.Close()
	for _, c := range []struct{ url, want string }{{closed, "connection refused"}, {unauth.URL, "Unauthorized"}} {
		m, err := New(Options{InitTimeout: 20 * time.Second, Backoff: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		m.Apply(m.Trust(Config{Servers: []ServerConfig{{Name: "r", URL: c.url}}}))
		waitFor(t, m, "the failure", func() bool { return serverState(m, "r").State == StateFailed })
		if e := serverState(m, "r").Error; strings.Contains(e, "did not finish initialize") || !strings.Contains(e, c.want) {
			t.Errorf("%s: %q, want %q", c.url, e, c.want)
		}
	}
}
