package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"jarvis/service/netguard"
)

// Signing out at the authorization server (RFC 7009), and the one rule of
// the addresses OAuth requests go to.
//
// The authorization server's metadata (RFC 8414), read by go-sdk during the
// sign-in, may name a revocation endpoint: Jarvis keeps it with the sign-in
// (signInRecord.RevokeURL), and Sign out posts the refresh token, then the
// access token, to it before forgetting them. golang.org/x/oauth2 has no
// revocation, so this is the RFC's plain form POST.
//
// Discovery, registration, token and revocation requests go through the
// service's netguard client (oauthClient): every connection is checked at
// connect time, on the address the socket is about to use; link-local,
// cloud metadata and other special-purpose addresses are refused (loopback
// and private ones are allowed, as for agents), redirects are not followed
// and no environment proxy connects on Jarvis's behalf. netguard is a leaf
// package (the standard library only), so the desktop uses the service's
// rule itself instead of a copy.

// oauthClient is hc (nil: a new client) under netguard's rule. A client
// with its own transport keeps it (and its own dialing).
func oauthClient(hc *http.Client) *http.Client { return netguard.Client(hc) }

// authMetaWatch remembers the authorization-server metadata documents go-sdk
// reads through it during a sign-in (the issuer, token and revocation
// endpoints), so that the revocation endpoint of the server that issued the
// tokens is known at sign-out.
type authMetaWatch struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []authMeta
}

type authMeta struct {
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"token_endpoint"`
	RevocationEndpoint string `json:"revocation_endpoint"`
}

func (w *authMetaWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!strings.Contains(r.URL.Path, "/.well-known/oauth-authorization-server") && !strings.Contains(r.URL.Path, "/.well-known/openid-configuration") {
		return resp, err
	}
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var m authMeta
	if rerr == nil && json.Unmarshal(b, &m) == nil {
		w.mu.Lock()
		w.seen = append(w.seen, m)
		w.mu.Unlock()
	}
	return resp, nil
}

// revocationFor is the revocation endpoint of the metadata whose token
// endpoint issued the tokens, when it is one Jarvis posts tokens to.
func (w *authMetaWatch) revocationFor(tokenURL string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.seen {
		if m.TokenEndpoint == tokenURL && tokenSafe(m.RevocationEndpoint) {
			return m.RevocationEndpoint
		}
	}
	return ""
}

// tokenSafe: a URL tokens may be sent to, https or a loopback http one (the
// same rule go-sdk applies to the authorization server's endpoints).
func tokenSafe(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	if u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// revoke asks the authorization server to revoke rec's refresh token, then
// its access token (RFC 7009 §2.1: the refresh token first, which most
// servers take to revoke the grant); nothing when it named no endpoint.
func revoke(ctx context.Context, rec signInRecord, hc *http.Client) error {
	if rec.RevokeURL == "" || rec.Token == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var errs []error
	for _, t := range []struct{ tok, hint string }{{rec.Token.RefreshToken, "refresh_token"}, {rec.Token.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		if err := revokeOne(ctx, hc, rec, t.tok, t.hint); err != nil {
			errs = append(errs, fmt.Errorf("the %s: %w", strings.ReplaceAll(t.hint, "_", " "), err))
		}
	}
	return errors.Join(errs...)
}

func revokeOne(ctx context.Context, hc *http.Client, rec signInRecord, tok, hint string) error {
	form := url.Values{"token": {tok}, "token_type_hint": {hint}}
	basic := rec.ClientSecret != "" && rec.AuthStyle != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", rec.ClientID)
		if rec.ClientSecret != "" {
			form.Set("client_secret", rec.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.RevokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(rec.ClientID), url.QueryEscape(rec.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	if e.Error != "" {
		return fmt.Errorf("the authorization server refused to revoke it (%s, %s)", resp.Status, e.Error)
	}
	return fmt.Errorf("the authorization server answered %s", resp.Status)
}
