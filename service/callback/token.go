// Package callback is the one callback infrastructure of the agents that
// answer the service over HTTP (external agents per session, proxy agents
// per call): the service's own base URL as learnt from the connections it
// serves (Base), the tokens handed out in callback URLs, of which only
// the hash is kept (NewToken, HashToken), and the replay protection of
// delivery ids (Replays). Signatures are package webhook's.
package callback

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"sync/atomic"
)

// Callback secrets of the agents the service calls (external agents per
// session, proxy agents per call): 32 random bytes handed out in a callback
// URL, of which only the SHA-256 is stored.

// NewToken mints a callback token with prefix and returns it and its hash
// (the form kept at rest).
func NewToken(prefix string) (tok, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	tok = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return tok, HashToken(tok), nil
}

// HashToken is the stored form of a callback token.
func HashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// Base is the service's own base URL ("http://127.0.0.1:PORT"), the default
// base of callback URLs. It is learnt from the local address of the
// connections requests arrive on, never from the Host header: any request,
// even one without a token, could otherwise make the service hand out
// callback URLs (and their tokens) on an address it does not listen on,
// such as [::1]:PORT while it listens on 127.0.0.1:PORT, which any local
// user can bind. Safe for concurrent use.
type Base struct {
	url atomic.Pointer[string]
}

// Note learns the base URL from the connection r arrived on.
func (b *Base) Note(r *http.Request) {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return
	}
	addr := a.String()
	if p := b.url.Load(); p != nil && len(*p) == len("http://")+len(addr) && (*p)[len("http://"):] == addr {
		return
	}
	u := "http://" + addr
	b.url.Store(&u)
}

// URL is the base URL learnt so far, "" before the first request.
func (b *Base) URL() string {
	if p := b.url.Load(); p != nil {
		return *p
	}
	return ""
}

// Or is configured when set (an agent's callbackBaseUrl), else the base URL
// learnt so far ("" before the first request).
func (b *Base) Or(configured string) string {
	if configured != "" {
		return configured
	}
	return b.URL()
}
