package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"jarvis/internal/testpeer"
	"jarvis/service/secrets"
)

// browser is the user's browser: it follows the authorization URL (the
// AS approves the test user) back to Jarvis's loopback redirect.
func browser(t *testing.T, opened *[]string) func(string) {
	return func(u string) {
		*opened = append(*opened, u)
		if err := testpeer.Browser(u); err != nil {
			t.Errorf("the browser: %v", err)
		}
	}
}

// oauthManager: a Manager with a real secret store (the OS keyring when a
// session bus runs, else its fallback file).
func oauthManager(t *testing.T, sc ServerConfig) (*Manager, *secrets.Store) {
	store := secrets.New(func(string) string { return "" }, secrets.WithFile(filepath.Join(t.TempDir(), "secrets.json"), nil))
	t.Cleanup(func() { store.Delete(SecretRef(sc.Name, OAuthSecret)) })
	m, err := New(Options{InitTimeout: 10 * time.Second, Backoff: time.Hour, Secret: store.Get, SetSecret: store.Set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(Config{Servers: []ServerConfig{sc}}))
	return m, store
}

func newAS(t *testing.T, exp time.Duration) *testpeer.AuthServer {
	as, err := testpeer.NewAuthServer(exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Close)
	return as
}

func newProtected(t *testing.T, as *testpeer.AuthServer) (string, func() int) {
	p := testpeer.NewProtectedMCP(as)
	t.Cleanup(p.Close)
	return p.URL, p.Unauthorized
}

func uniqueName(prefix string) string { return prefix + strings.ToLower(rand.Text()[:8]) }

// TestOAuthSignInRefreshRevoke: a server behind OAuth waits for a sign-in;
// signing in discovers the AS from the server's 401, registers Jarvis,
// sends the user through PKCE S256 and a loopback redirect and stores the
// tokens; an access token the AS revoked is renewed on the 401; a revoked
// refresh token leads back to "sign in"; Sign out forgets the sign-in.
func TestOAuthSignInRefreshRevoke(t *testing.T) {
	as := newAS(t, time.Hour)
	mcpURL, unauthorized := newProtected(t, as)
	name := uniqueName("sec")
	m, store := oauthManager(t, ServerConfig{Name: name, URL: mcpURL})

	waitFor(t, m, "the sign-in request", func() bool { return serverState(m, name).State == StateSignIn })
	if st := serverState(m, name); !st.SignIn || st.SignedIn {
		t.Fatalf("before sign-in: %+v", st)
	}

	var opened []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	waitFor(t, m, "the signed-in server", func() bool { return hasTool(m, "mcp__"+name+"__echo") })
	if st := serverState(m, name); !st.SignedIn {
		t.Errorf("after sign-in SignedIn is false: %+v", st)
	}
	if len(opened) != 1 || !strings.HasPrefix(opened[0], as.URL+"/authorize?") || !strings.Contains(opened[0], "code_challenge_method=S256") {
		t.Errorf("the browser was sent to %q", opened)
	}
	if reg := as.Seen("register "); len(reg) != 1 || !strings.HasPrefix(reg[0], "register http://127.0.0.1:") {
		t.Errorf("registrations: %q", reg)
	}
	if a := as.Seen("authorize "); len(a) != 1 || a[0] != "authorize S256 resource="+mcpURL {
		t.Errorf("authorization requests: %q", a)
	}
	raw, err := store.Get(SecretRef(name, OAuthSecret))
	if err != nil || !strings.Contains(raw, `"refresh_token"`) {
		t.Fatalf("stored sign-in: %q %v", raw, err)
	}
	var rec signInRecord
	json.Unmarshal([]byte(raw), &rec)

	// The AS revokes the access token: the next call gets a 401, Jarvis
	// renews with the refresh token and sends the call again.
	if err := as.Manager.RemoveAccessToken(ctx, rec.Token.AccessToken); err != nil {
		t.Fatal(err)
	}
	before := unauthorized()
	out, err := m.Call(ctx, "c1", "mcp__"+name+"__echo", json.RawMessage(`{"text":"after revoke"}`), nil)
	if err != nil || !strings.Contains(out, "after revoke") {
		t.Fatalf("call after the access token was revoked: %q %v", out, err)
	}
	if unauthorized() <= before || len(as.Seen("token refresh_token")) != 1 {
		t.Errorf("want a 401 and one refresh: 401s %d→%d, token requests %q", before, unauthorized(), as.Seen("token "))
	}

	// The refresh token is revoked too: Jarvis asks to sign in again.
	raw, _ = store.Get(SecretRef(name, OAuthSecret))
	json.Unmarshal([]byte(raw), &rec)
	as.Manager.RemoveAccessToken(ctx, rec.Token.AccessToken)
	as.Manager.RemoveRefreshToken(ctx, rec.Token.RefreshToken)
	if err := m.Restart(name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "sign in again", func() bool { return serverState(m, name).State == StateSignIn })
	if e := serverState(m, name).Error; !strings.Contains(e, "sign in again") || !strings.Contains(e, "invalid_grant") {
		t.Errorf("after the refresh token was revoked: %q", e)
	}

	// Sign in again, then out.
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("second sign-in: %v", err)
	}
	waitFor(t, m, "signed in again", func() bool { return serverState(m, name).State == StateReady })
	if err := m.SignOut(name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "signed out", func() bool {
		st := serverState(m, name)
		return st.State == StateSignIn && !st.SignedIn
	})
}

// TestOAuthRefreshBeforeExpiry: an access token that expires within a
// minute is renewed before it is sent (no 401 needed); a fixed redirect
// port is the one registered.
func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	as := newAS(t, 30*time.Second)
	mcpURL, unauthorized := newProtected(t, as)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	name := uniqueName("exp")
	m, _ := oauthManager(t, ServerConfig{Name: name, URL: mcpURL, OAuth: &OAuthConfig{RedirectPort: port}})
	waitFor(t, m, "the sign-in request", func() bool { return serverState(m, name).State == StateSignIn })
	n := unauthorized()
	var opened []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	waitFor(t, m, "the signed-in server", func() bool { return hasTool(m, "mcp__"+name+"__echo") })
	if reg := as.Seen("register "); len(reg) != 1 || reg[0] != "register http://127.0.0.1:"+strconv.Itoa(port)+"/callback" {
		t.Errorf("registered %q, want the fixed port %d", reg, port)
	}
	if len(as.Seen("token refresh_token")) == 0 {
		t.Errorf("a token that expires in 30 s was sent without renewal: %q", as.Seen("token "))
	}
	if got := unauthorized(); got != n+1 { // the sign-in's own probe only
		t.Errorf("401s after the sign-in: %d, want %d", got, n+1)
	}
}

// TestOAuthWrongVerifierRefused: the authorization server of these tests
// is not one that accepts anything: a code exchanged with another PKCE
// verifier than the one it was issued for is refused.
func TestOAuthWrongVerifierRefused(t *testing.T) {
	as := newAS(t, time.Hour)
	ctx := context.Background()
	reg, err := oauthex.RegisterClient(ctx, as.URL+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://127.0.0.1:9/callback"}, TokenEndpointAuthMethod: "none"}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: "http://127.0.0.1:9/callback",
		Endpoint: oauth2.Endpoint{AuthURL: as.URL + "/authorize", TokenURL: as.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code := func(verifier string) string {
		resp, err := noFollow.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc == nil || loc.Query().Get("code") == "" {
			t.Fatalf("no code: %s %q", resp.Status, resp.Header.Get("Location"))
		}
		return loc.Query().Get("code")
	}
	v := oauth2.GenerateVerifier()
	_, err = cfg.Exchange(ctx, code(v), oauth2.VerifierOption(oauth2.GenerateVerifier()))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("a wrong verifier: %v", err)
	}
	if _, err := cfg.Exchange(ctx, code(v), oauth2.VerifierOption(v)); err != nil {
		t.Fatalf("the right verifier: %v", err)
	}
	// Without PKCE at all, no code is issued.
	resp, err := noFollow.Get(cfg.AuthCodeURL("st"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "code=") {
		t.Fatalf("a code without PKCE: %q", loc)
	}
}

// TestOAuthSignInLegacySSE: a server on the legacy HTTP+SSE transport that
// asks for a sign-in is signed in to the same way, and its stream and
// messages carry the token.
func TestOAuthSignInLegacySSE(t *testing.T) {
	as := newAS(t, time.Hour)
	p := testpeer.NewProtectedMCP(as)
	t.Cleanup(p.Close)
	name := uniqueName("sse")
	m, _ := oauthManager(t, ServerConfig{Name: name, URL: p.SSEURL, Type: "sse"})
	waitFor(t, m, "the sign-in request", func() bool { return serverState(m, name).State == StateSignIn })
	var opened []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, browser(t, &opened)); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	waitFor(t, m, "the signed-in server", func() bool { return hasTool(m, "mcp__"+name+"__echo") })
	out, err := m.Call(ctx, "c", "mcp__"+name+"__echo", json.RawMessage(`{"text":"over sse"}`), nil)
	if err != nil || !strings.Contains(out, "over sse") {
		t.Fatalf("call: %q %v", out, err)
	}
	if a := as.Seen("authorize "); len(a) != 1 || a[0] != "authorize S256 resource="+p.SSEURL {
		t.Errorf("authorization requests: %q", a)
	}
}
