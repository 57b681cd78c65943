package mcp

// OAuth 2.1 sign-in for url servers (MCP spec 2025-11-25, "Authorization").
//
// A server that answers 401 with a Bearer WWW-Authenticate challenge waits
// in StateSignIn until the user signs in (the panel's "Sign in", or
// `jarvis mcp login`). Sign-in is go-sdk's auth.AuthorizationCodeHandler:
// protected-resource metadata (RFC 9728), authorization-server metadata
// (RFC 8414 / OIDC discovery), a configured client id or dynamic client
// registration (RFC 7591), PKCE S256 (golang.org/x/oauth2) and the "resource"
// parameter. Its redirect comes back to a listener on 127.0.0.1 (RFC 8252:
// any port; "oauth": {"redirectPort": N} for identity providers that want a
// registered redirect URI). The tokens and the client they were issued to
// are one secret of the server, SecretRef(server, OAuthSecret): the access
// token is refreshed a minute before it expires and when the server answers
// 401; a refresh the authorization server refuses (revoked, expired) puts
// the server back in StateSignIn, "sign in again".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"jarvis/service/secrets"
)

// StateSignIn: the server asks for a sign-in (OAuth) before it answers.
const StateSignIn = "signin"

// OAuthSecret is the name, among a server's secrets (SecretRef), of its
// sign-in: the tokens and the client they were issued to.
const OAuthSecret = "oauth-token"

// OAuthConfig is an entry's "oauth" object. All of it is optional: without
// a client id Jarvis registers itself with the authorization server.
type OAuthConfig struct {
	// ClientID is a client registered beforehand with the authorization
	// server (for one that offers no dynamic registration).
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret goes with ClientID; may be "${keyring:NAME}".
	ClientSecret string `json:"clientSecret,omitempty"`
	// RedirectPort fixes the port of the loopback redirect
	// (http://127.0.0.1:PORT/callback), for a provider that accepts only a
	// registered redirect URI; 0 picks a free port.
	RedirectPort int `json:"redirectPort,omitempty"`
	// Scopes replaces the scopes the server asks for.
	Scopes []string `json:"scopes,omitempty"`
}

// signInRecord is what OAuthSecret holds.
type signInRecord struct {
	ClientID     string           `json:"client_id,omitempty"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Token        *oauth2.Token    `json:"token,omitempty"`
	// RevokeURL is the authorization server's revocation endpoint (RFC
	// 7009), when its metadata named one (oauthrevoke.go).
	RevokeURL string `json:"revoke_url,omitempty"`
}

// refreshEarly: an access token is refreshed this long before it expires.
const refreshEarly = time.Minute

// errSignIn is a refresh the authorization server refused, or no sign-in.
var errSignIn = errors.New("sign in again")

// tokens is a server's signed-in token source: refreshes before expiry
// and on demand (a 401), saving every new token.
type tokens struct {
	mu   sync.Mutex
	rec  signInRecord
	hc   *http.Client
	save func(signInRecord) error
}

func (t *tokens) config() *oauth2.Config {
	return &oauth2.Config{ClientID: t.rec.ClientID, ClientSecret: t.rec.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: t.rec.TokenURL, AuthStyle: t.rec.AuthStyle}}
}

// Token is the current access token, refreshed first when it expires
// within refreshEarly.
func (t *tokens) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := t.rec.Token
	if tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || time.Until(tok.Expiry) > refreshEarly) {
		return tok, nil
	}
	return t.refreshLocked()
}

// refresh gets a new access token unless the one refused (stale) was
// already replaced.
func (t *tokens) refresh(stale string) (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rec.Token != nil && t.rec.Token.AccessToken != stale && t.rec.Token.AccessToken != "" {
		return t.rec.Token, nil
	}
	return t.refreshLocked()
}

func (t *tokens) refreshLocked() (*oauth2.Token, error) {
	if t.rec.Token == nil || t.rec.Token.RefreshToken == "" {
		return nil, errSignIn
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), oauth2.HTTPClient, t.hc), 30*time.Second)
	defer cancel()
	// A token without an access token is refreshed at once (oauth2's own
	// refresh grant, which keeps the refresh token when none comes back).
	nt, err := t.config().TokenSource(ctx, &oauth2.Token{RefreshToken: t.rec.Token.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("%w: the authorization server refused to renew the sign-in (%s)", errSignIn, refusal(re))
	}
	if err != nil {
		return nil, err
	}
	t.rec.Token = nt
	if err := t.save(t.rec); err != nil {
		return nil, fmt.Errorf("keeping the renewed sign-in: %w", err)
	}
	return nt, nil
}

func refusal(re *oauth2.RetrieveError) string {
	if re.ErrorCode != "" {
		return re.ErrorCode
	}
	if re.Response != nil {
		return re.Response.Status
	}
	return "refused"
}

// bearer adds the signed-in access token to every request, renews it once
// on a 401, and records a Bearer challenge as the server asking for a
// sign-in (signIn).
type bearer struct {
	base   http.RoundTripper
	tokens *tokens // nil: not signed in
	signIn func(why string)
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.tokens == nil {
		resp, err := b.base.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusUnauthorized && bearerChallenge(resp) {
			b.signIn("the server asks you to sign in")
		}
		return resp, err
	}
	tok, err := b.tokens.Token()
	if err != nil {
		if errors.Is(err, errSignIn) {
			b.signIn(err.Error())
		}
		return nil, err
	}
	resp, err := b.base.RoundTrip(withToken(r, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !bearerChallenge(resp) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return resp, nil // cannot send it again
	}
	nt, rerr := b.tokens.refresh(tok.AccessToken)
	if rerr != nil {
		if errors.Is(rerr, errSignIn) {
			b.signIn(rerr.Error())
		}
		return resp, nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r2 := r
	if r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			return nil, err
		}
		r2 = r.Clone(r.Context())
		r2.Body = body
	}
	resp, err = b.base.RoundTrip(withToken(r2, nt))
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		b.signIn("the server refused the renewed sign-in")
	}
	return resp, err
}

func withToken(r *http.Request, tok *oauth2.Token) *http.Request {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r
}

// bearerChallenge reports whether a response asks for a Bearer token.
func bearerChallenge(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// loadSignIn reads a server's sign-in ("" record when none or signed out).
func loadSignIn(server string, get func(string) (string, error)) (signInRecord, error) {
	var rec signInRecord
	if get == nil {
		return rec, nil
	}
	v, err := get(SecretRef(server, OAuthSecret))
	if errors.Is(err, secrets.ErrNotFound) || err == nil && v == "" {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal([]byte(v), &rec); err != nil {
		return signInRecord{}, nil // unreadable: as if signed out
	}
	return rec, nil
}

// oauthTransport wraps base for a url server: nil when its entry sets its
// own Authorization header (a static token: no sign-in).
func (s *server) oauthTransport(base http.RoundTripper, hc *http.Client) (http.RoundTripper, error) {
	for k := range s.cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return base, nil
		}
	}
	rec, err := loadSignIn(s.cfg.Name, s.m.opts.Secret)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.signedIn = rec.Token != nil
	s.mu.Unlock()
	b := bearer{base: base, signIn: s.needSignIn}
	if rec.Token != nil {
		b.tokens = &tokens{rec: rec, hc: oauthClient(hc), save: s.m.saveSignIn(s.cfg.Name)}
	}
	return b, nil
}

// needSignIn records that the server waits for the user's sign-in.
func (s *server) needSignIn(why string) { s.signIn.Store(&why) }

func (m *Manager) saveSignIn(server string) func(signInRecord) error {
	return func(rec signInRecord) error {
		if m.opts.SetSecret == nil {
			return errors.New("this Jarvis has no secret store")
		}
		b, _ := json.Marshal(rec)
		return m.opts.SetSecret(SecretRef(server, OAuthSecret), string(b))
	}
}

// SignInOptions is what SignIn needs besides the entry.
type SignInOptions struct {
	Secret     func(ref string) (string, error)
	SetSecret  func(ref, value string) error
	HTTPClient *http.Client
	// Open shows the authorization URL to the user: the desktop opens it in
	// the browser, a terminal prints it.
	Open func(url string)
}

// SignIn runs the OAuth authorization code flow for cfg's server and stores
// the tokens (SecretRef(server, OAuthSecret)). It waits for the browser's
// redirect until ctx ends.
func SignIn(ctx context.Context, cfg ServerConfig, o SignInOptions) error {
	if cfg.Label == "" {
		cfg.Label = cfg.Name
	}
	if !cfg.IsHTTP() {
		return fmt.Errorf("%s is started by Jarvis (a command), not reached at a url: there is nothing to sign in to", cfg.Label)
	}
	if o.SetSecret == nil {
		return errors.New("this Jarvis has no secret store to keep a sign-in in")
	}
	headers, err := resolve(cfg.Name, cfg.Headers, o.Secret)
	if err != nil {
		return err
	}
	hc := oauthClient(o.HTTPClient) // discovery, registration and the token exchange under netguard's rule
	c := *hc
	watch := &authMetaWatch{base: headerTransport{base: hc.Transport, headers: headers}}
	c.Transport = watch
	oc := OAuthConfig{}
	if cfg.OAuth != nil {
		oc = *cfg.OAuth
	}

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(oc.RedirectPort)))
	if err != nil {
		return fmt.Errorf("the sign-in needs port %d on this computer for the browser's return, and it is taken: %w", oc.RedirectPort, err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	got := make(chan *auth.AuthorizationResult, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		res := &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if e := q.Get("error"); e != "" || res.Code == "" {
			fmt.Fprintf(w, "Signing in to %s did not succeed (%s). You can close this tab.\n", cfg.Label, e)
		} else {
			fmt.Fprintf(w, "Signed in to %s. You can close this tab and go back to Jarvis.\n", cfg.Label)
		}
		select {
		case got <- res:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	var signed *signInRecord
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              &c,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if o.Open != nil {
				o.Open(a.URL)
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("the sign-in was not finished in the browser: %w", ctx.Err())
			case r := <-got:
				if r.Code == "" {
					return nil, errors.New("the authorization server did not grant access")
				}
				return r, nil
			}
		},
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			signed = &signInRecord{ClientID: oc.ClientID, ClientSecret: oc.ClientSecret, TokenURL: oc.Endpoint.TokenURL,
				AuthStyle: oc.Endpoint.AuthStyle, Token: tok}
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	if len(oc.Scopes) > 0 {
		scopes := oc.Scopes
		hcfg.ScopeFilter = func([]string) []string { return scopes }
	}
	if oc.ClientID != "" {
		secret, err := resolve(cfg.Name, map[string]string{"clientSecret": oc.ClientSecret}, o.Secret)
		if err != nil {
			return err
		}
		pre := &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if s := secret["clientSecret"]; s != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: s}
		}
		hcfg.PreregisteredClient = pre
	} else {
		hcfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              "Jarvis",
			RedirectURIs:            []string{redirect},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		return err
	}

	// The 401 that starts the flow: an initialize request without a token.
	req, resp, err := probe(ctx, &c, cfg)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		resp.Body.Close()
		return fmt.Errorf("%s does not ask for a sign-in (it answered %s)", cfg.Label, resp.Status)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("signing in to %s: %w", cfg.Label, err)
	}
	if signed == nil {
		return fmt.Errorf("signing in to %s: no token came back", cfg.Label)
	}
	signed.RevokeURL = watch.revocationFor(signed.TokenURL)
	b, _ := json.Marshal(signed)
	return o.SetSecret(SecretRef(cfg.Name, OAuthSecret), string(b))
}

// probe sends what a client sends first (initialize; GET for the legacy
// SSE transport), without a token.
func probe(ctx context.Context, c *http.Client, cfg ServerConfig) (*http.Request, *http.Response, error) {
	var req *http.Request
	var err error
	if cfg.IsSSE() {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"jarvis","version":"1"}}}`
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cfg.Label, err)
	}
	return req, resp, nil
}

// SignOut forgets a server's sign-in (its tokens and the client they were
// issued to), after asking the authorization server to revoke the tokens
// when it named a revocation endpoint (oauthrevoke.go). The sign-in is
// forgotten even when the revocation fails; the error then says so.
func SignOut(ctx context.Context, server string, o SignInOptions) error {
	if o.SetSecret == nil {
		return errors.New("this Jarvis has no secret store")
	}
	rec, err := loadSignIn(server, o.Secret)
	var rerr error
	if err == nil {
		rerr = revoke(ctx, rec, oauthClient(o.HTTPClient))
	}
	if err := o.SetSecret(SecretRef(server, OAuthSecret), "{}"); err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("%w: %w", ErrNotRevoked, rerr)
	}
	return nil
}

// ErrNotRevoked wraps SignOut's error when the sign-in was forgotten here
// but the authorization server could not be told.
var ErrNotRevoked = errors.New("signed out here, but the authorization server could not be told to end the sign-in, which may stay valid there until it expires")

// SignIn signs in to a server (SignIn) and starts it again. open shows the
// authorization URL to the user.
func (m *Manager) SignIn(ctx context.Context, name string, open func(url string)) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("no MCP server %q", name)
	}
	s.mu.Lock()
	if s.signingIn {
		s.mu.Unlock()
		return fmt.Errorf("a sign-in to %s is already under way: finish it in the browser", s.cfg.Label)
	}
	s.signingIn, s.signInErr = true, ""
	s.mu.Unlock()
	m.changed()
	err := SignIn(ctx, s.cfg, SignInOptions{Secret: m.opts.Secret, SetSecret: m.opts.SetSecret, HTTPClient: m.opts.HTTPClient, Open: open})
	s.mu.Lock()
	s.signingIn = false
	if err != nil {
		s.signInErr = err.Error()
	}
	s.mu.Unlock()
	m.changed()
	if err != nil {
		m.log.Warn("mcp: sign-in failed", "server", s.cfg.Label, "err", err)
		return err
	}
	m.log.Info("mcp: signed in", "server", s.cfg.Label)
	return m.restart(name)
}

// SignOut forgets a server's sign-in and starts it again (it then waits for
// a sign-in).
func (m *Manager) SignOut(name string) error {
	m.mu.Lock()
	_, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("no MCP server %q", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := SignOut(ctx, name, SignInOptions{Secret: m.opts.Secret, SetSecret: m.opts.SetSecret, HTTPClient: m.opts.HTTPClient})
	if err != nil && !errors.Is(err, ErrNotRevoked) {
		return err
	}
	if err != nil {
		m.log.Warn("mcp: signed out; the authorization server was not told", "server", name, "err", err)
	} else {
		m.log.Info("mcp: signed out", "server", name)
	}
	return errors.Join(err, m.restart(name))
}
