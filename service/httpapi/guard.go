package httpapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"jarvis/service/listener"
)

// Guard holds the checks every route shares, applied before any handler
// runs: Host (DNS rebinding), Origin (cross-site requests), then the bearer
// token.
type Guard struct {
	Token                string
	AllowNonLoopbackHost bool            // --allow-non-loopback: no Host check
	AllowedOrigins       map[string]bool // extra browser origins
	// Seen, when set, is told of every request that passed the guard (the
	// service learns its own base URL from them).
	Seen func(*http.Request)
}

// Wrap puts next behind the guard.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		port := localPort(r)
		if !g.AllowNonLoopbackHost && !loopbackHost(r.Host, port) {
			WriteError(w, Errorf(http.StatusForbidden, "forbidden_host", "Host %q is not a loopback address of this service", r.Host))
			return
		}
		if !g.sameOrigin(r, port) {
			WriteError(w, Errorf(http.StatusForbidden, "forbidden_origin", "cross-origin requests are refused"))
			return
		}
		if needsToken(r.URL.Path) {
			if !g.validToken(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="jarvis"`)
				WriteError(w, Errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token"))
				return
			}
			listener.TrustConn(r.Context()) // never dropped to make room (package listener)
		}
		if g.Seen != nil {
			g.Seen(r)
		}
		next.ServeHTTP(w, r)
	})
}

func needsToken(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/")
}

func (g *Guard) validToken(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(g.Token)) == 1
}

// localPort is the port the request's connection arrived on.
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			return p
		}
	}
	return ""
}

// loopbackHost accepts exactly 127.0.0.1:PORT, localhost:PORT and [::1]:PORT
// for the port the request arrived on.
func loopbackHost(host, port string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != port || port == "" {
		return false
	}
	switch strings.ToLower(h) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// sameOrigin refuses requests that a web page on another origin made: a
// foreign Origin header, or Sec-Fetch-Site cross-site/same-site.
func (g *Guard) sameOrigin(r *http.Request, port string) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" {
		return g.AllowedOrigins[o]
	}
	if loopbackHost(u.Host, port) {
		return true
	}
	return g.AllowedOrigins[o]
}
