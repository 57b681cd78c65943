package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"jarvis/service/secrets"
)

// bearerStatus is the MCP server's answer to an initialize sent with tok.
func bearerStatus(t *testing.T, mcpURL, tok string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestOAuthSignOutRevokes: signing out tells the authorization server,
// which advertises a revocation endpoint (RFC 7009), to revoke the refresh
// and the access token; the MCP server then refuses the old access token.
func TestOAuthSignOutRevokes(t *testing.T) {
	as := newAS(t, time.Hour)
	mcpURL, _ := newProtected(t, as)
	name := uniqueName("rev")
	m, store := oauthManager(t, ServerConfig{Name: name, URL: mcpURL})
	waitFor(t, m, "the sign-in request", func() bool { return serverState(m, name).State == StateSignIn })
	var opened []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	waitFor(t, m, "the signed-in server", func() bool { return serverState(m, name).State == StateReady })
	raw, _ := store.Get(SecretRef(name, OAuthSecret))
	var rec signInRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Token == nil {
		t.Fatalf("stored sign-in %q: %v", raw, err)
	}
	if got := bearerStatus(t, mcpURL, rec.Token.AccessToken); got != http.StatusOK {
		t.Fatalf("the access token before sign-out: %d", got)
	}

	if err := m.SignOut(name); err != nil {
		t.Fatal(err)
	}
	if got := as.Seen("revoke "); len(got) != 2 || got[0] != "revoke refresh_token" || got[1] != "revoke access_token" {
		t.Fatalf("revocation requests at sign-out: %q", got)
	}
	if got := bearerStatus(t, mcpURL, rec.Token.AccessToken); got != http.StatusUnauthorized {
		t.Fatalf("the MCP server still takes the signed-out access token: %d", got)
	}
	if _, err := as.Manager.LoadRefreshToken(ctx, rec.Token.RefreshToken); err == nil {
		t.Fatal("the refresh token is still valid at the authorization server")
	}
	waitFor(t, m, "signed out", func() bool { st := serverState(m, name); return st.State == StateSignIn && !st.SignedIn })
}

// TestOAuthSignOutWhenRevocationRefused: an authorization server that
// refuses the revocation (here: the client it names is not the one the
// tokens were issued to) does not keep the sign-in here: it is forgotten,
// and the error says the server was not told.
func TestOAuthSignOutWhenRevocationRefused(t *testing.T) {
	as := newAS(t, time.Hour)
	mcpURL, _ := newProtected(t, as)
	name := uniqueName("rf")
	m, store := oauthManager(t, ServerConfig{Name: name, URL: mcpURL})
	waitFor(t, m, "the sign-in request", func() bool { return serverState(m, name).State == StateSignIn })
	var opened []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	waitFor(t, m, "the signed-in server", func() bool { return serverState(m, name).State == StateReady })
	raw, _ := store.Get(SecretRef(name, OAuthSecret))
	var rec signInRecord
	json.Unmarshal([]byte(raw), &rec)
	rec.ClientID = "not-registered"
	b, _ := json.Marshal(rec)
	store.Set(SecretRef(name, OAuthSecret), string(b))

	err := m.SignOut(name)
	if !errors.Is(err, ErrNotRevoked) || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("sign-out with a refused revocation: %v", err)
	}
	if raw, _ := store.Get(SecretRef(name, OAuthSecret)); raw != "{}" {
		t.Fatalf("the sign-in is still stored: %q", raw)
	}
	waitFor(t, m, "signed out", func() bool { st := serverState(m, name); return st.State == StateSignIn && !st.SignedIn })
}

// TestOAuthTokenRequestsUnderNetguard: a sign-in whose token endpoint is a
// cloud metadata address (a record written by anyone who can write the
// secret store, or a name that resolves there) is never sent: the renewal
// is refused at the connection by the service's netguard rule, and the
// server says why.
func TestOAuthTokenRequestsUnderNetguard(t *testing.T) {
	as := newAS(t, time.Hour)
	mcpURL, _ := newProtected(t, as)
	name := uniqueName("ng")
	store := secrets.New(func(string) string { return "" }, secrets.WithFile(filepath.Join(t.TempDir(), "secrets.json"), nil))
	t.Cleanup(func() { store.Delete(SecretRef(name, OAuthSecret)) })
	rec, _ := json.Marshal(signInRecord{ClientID: "c", TokenURL: "http://169.254.169.254/token",
		Token: &oauth2.Token{AccessToken: "old", RefreshToken: "r", Expiry: time.Now().Add(-time.Hour)}})
	if err := store.Set(SecretRef(name, OAuthSecret), string(rec)); err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{InitTimeout: 10 * time.Second, Backoff: time.Hour, Secret: store.Get, SetSecret: store.Set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(Config{Servers: []ServerConfig{{Name: name, URL: mcpURL}}}))
	waitFor(t, m, "the refused renewal", func() bool { return strings.Contains(serverState(m, name).Error, "address refused") })
	if e := serverState(m, name).Error; !strings.Contains(e, "169.254.169.254") {
		t.Fatalf("the server's error does not name the refused address: %q", e)
	}
}
