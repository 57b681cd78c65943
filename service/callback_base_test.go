package service_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"jarvis/api"
)

// TestCallbackBaseIgnoresHostHeader: an unauthenticated request with a Host
// the service accepts but does not listen on ([::1] while it listens on
// 127.0.0.1) must not become the base of the callback URLs (and their
// tokens) handed to external agents: that address can be bound by any local
// user. The base is the listener's own address.
func TestCallbackBaseIgnoresHostHeader(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL+"/v1/assistant/input", ""))
	port := e.srv.URL[strings.LastIndex(e.srv.URL, ":")+1:]
	for _, host := range []string{"[::1]:" + port, "localhost:" + port} {
		req, err := http.NewRequest("GET", e.srv.URL+"/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /health with Host %s: %d", host, resp.StatusCode)
		}
	}
	sid := e.extSession("ext", "HOST-POISON")
	// The turn itself is requested with the [::1] Host too, so that the
	// last Host the service saw before forwarding is the poisoned one
	// (an attacker looping GET /health gets there by timing; this is the
	// same, deterministically).
	hc := &http.Client{Transport: hostRewriter{host: "[::1]:" + port}}
	if _, err := api.NewClient(e.srv.URL, testToken, hc).Chat(context.Background(), sid, "hello"); err != nil {
		t.Fatal(err)
	}
	ins, _ := peer.got()
	if len(ins) != 1 {
		t.Fatalf("%d inputs", len(ins))
	}
	if want := "http://127.0.0.1:" + port + "/external/sessions/HOST-POISON/messages?token="; !strings.HasPrefix(ins[0].CallbackURL, want) {
		t.Fatalf("callbackUrl %q, want it to start with %q (the listener's address)", ins[0].CallbackURL, want)
	}
	if got := e.extCallbackURL(sid); !strings.HasPrefix(got, "http://127.0.0.1:"+port+"/") {
		t.Fatalf("GET /v1/external/sessions: callbackUrl %q", got)
	}
}

// hostRewriter sends every request with the given Host header.
type hostRewriter struct{ host string }

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return http.DefaultTransport.RoundTrip(r)
}
