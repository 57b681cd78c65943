package roundtable

import (
	"net/http"
	"time"

	"jarvis/service/netguard"
)

// NewSafeClient returns the client the engine uses when Options.Client is
// nil: every dial passes the service's one address check (netguard.Dialer)
// after resolution, environment proxies are ignored
// (a proxy would dial on our behalf and bypass the guard), and redirects are
// never followed. It sets no overall timeout; the engine bounds each call.
func NewSafeClient() *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           netguard.Dialer(30 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Agents have no reason to send large headers; the body has its own cap.
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: t, CheckRedirect: refuseRedirect}
}

func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// withoutRedirects returns a shallow copy of c that never follows redirects,
// leaving the caller's client untouched.
func withoutRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = refuseRedirect
	return &cc
}

// Resolver is the part of *net.Resolver that registration checks need.
type Resolver = netguard.Resolver
