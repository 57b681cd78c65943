package testpeer

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	goauth "github.com/go-oauth2/oauth2/v4"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	asserver "github.com/go-oauth2/oauth2/v4/server"
	asstore "github.com/go-oauth2/oauth2/v4/store"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthServer is an OAuth 2.1 authorization server built on go-oauth2 (a
// maintained server library): the authorization code grant with PKCE S256
// forced, refresh tokens that rotate, RFC 8414 metadata and RFC 7591
// dynamic registration in front of its client store. It approves its one
// user ("test-user") without a login page; everything else (client,
// redirect URI, code, verifier, refresh token) it checks as for anyone.
type AuthServer struct {
	URL     string
	Manager *manage.Manager // revoke with RemoveAccessToken / RemoveRefreshToken
	hs      *httptest.Server
	mu      sync.Mutex
	log     []string
}

// NewAuthServer starts one; its access tokens last accessExp.
func NewAuthServer(accessExp time.Duration) (*AuthServer, error) {
	a := &AuthServer{Manager: manage.NewDefaultManager()}
	a.Manager.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: accessExp, RefreshTokenExp: time.Hour, IsGenerateRefresh: true})
	a.Manager.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: accessExp, IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	ts, err := asstore.NewMemoryTokenStore()
	if err != nil {
		return nil, err
	}
	a.Manager.MapTokenStorage(ts)
	clients := asstore.NewClientStore()
	a.Manager.MapClientStorage(clients)
	srv := asserver.NewServer(&asserver.Config{TokenType: "Bearer",
		AllowedResponseTypes:        []goauth.ResponseType{goauth.Code},
		AllowedGrantTypes:           []goauth.GrantType{goauth.AuthorizationCode, goauth.Refreshing},
		AllowedCodeChallengeMethods: []goauth.CodeChallengeMethod{goauth.CodeChallengeS256},
		ForcePKCE:                   true}, a.Manager)
	srv.SetClientInfoHandler(asserver.ClientFormHandler)
	srv.SetUserAuthorizationHandler(func(http.ResponseWriter, *http.Request) (string, error) { return "test-user", nil })

	mux := http.NewServeMux()
	a.hs = httptest.NewServer(mux)
	a.URL = a.hs.URL
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
			"registration_endpoint": a.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"tools", "offline_access"},
			"revocation_endpoint": a.URL + "/revoke", "revocation_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var meta oauthex.ClientRegistrationMetadata
		if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
			http.Error(w, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
			return
		}
		id := rand.Text()
		u, _ := url.Parse(meta.RedirectURIs[0])
		clients.Set(id, &models.Client{ID: id, Domain: u.Scheme + "://" + u.Host, Public: true})
		a.record("register " + meta.RedirectURIs[0])
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs,
			"token_endpoint_auth_method": "none", "grant_types": meta.GrantTypes})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		a.record("authorize " + r.FormValue("code_challenge_method") + " resource=" + r.FormValue("resource"))
		if err := srv.HandleAuthorizeRequest(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	// RFC 7009 token revocation, for public clients (client_id in the
	// form): a token of another client is refused, an unknown one is
	// answered 200 as the RFC says.
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.ParseForm() != nil {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		tok, hint, client := r.PostForm.Get("token"), r.PostForm.Get("token_type_hint"), r.PostForm.Get("client_id")
		a.record("revoke " + hint)
		if tok == "" || client == "" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		if _, err := clients.GetByID(r.Context(), client); err != nil {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		ti, err := a.Manager.LoadAccessToken(r.Context(), tok)
		remove := a.Manager.RemoveAccessToken
		if err != nil {
			ti, err = a.Manager.LoadRefreshToken(r.Context(), tok)
			remove = a.Manager.RemoveRefreshToken
		}
		if err != nil {
			return // unknown or already revoked: 200
		}
		if ti.GetClientID() != client {
			http.Error(w, `{"error":"unauthorized_client"}`, http.StatusBadRequest)
			return
		}
		if err := remove(r.Context(), tok); err != nil {
			http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.record("token " + r.PostForm.Get("grant_type"))
		srv.HandleTokenRequest(w, r)
	})
	return a, nil
}

func (a *AuthServer) record(s string) { a.mu.Lock(); a.log = append(a.log, s); a.mu.Unlock() }

// Seen is what it was asked, in order, among lines starting with prefix:
// "register <redirect uri>", "authorize <challenge method> resource=<r>",
// "token <grant type>", "revoke <token type hint>".
func (a *AuthServer) Seen(prefix string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, l := range a.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// Close stops it.
func (a *AuthServer) Close() { a.hs.Close() }

// ProtectedMCP is MCPPeer's server behind go-sdk's bearer-token check
// against an AuthServer's tokens, with its RFC 9728 metadata; URL is the
// MCP endpoint.
type ProtectedMCP struct {
	URL    string
	SSEURL string
	hs     *httptest.Server
	n401   atomicCounter
}

type atomicCounter struct {
	mu sync.Mutex
	n  int
}

// Unauthorized counts the 401s it answered.
func (p *ProtectedMCP) Unauthorized() int {
	p.n401.mu.Lock()
	defer p.n401.mu.Unlock()
	return p.n401.n
}

// Close stops it.
func (p *ProtectedMCP) Close() { p.hs.Close() }

// NewProtectedMCP starts one guarded by as.
func NewProtectedMCP(as *AuthServer) *ProtectedMCP {
	verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		ti, err := as.Manager.LoadAccessToken(ctx, tok)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: ti.GetUserID(), Expiration: ti.GetAccessCreateAt().Add(ti.GetAccessExpiresIn())}, nil
	}
	peer := NewMCPPeer().Server
	mux := http.NewServeMux()
	p := &ProtectedMCP{hs: httptest.NewServer(mux)}
	p.URL = p.hs.URL + "/mcp"
	prm := p.hs.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.URL, AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"tools"}}))
	guarded := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return peer }, nil))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w}
		guarded.ServeHTTP(rec, r)
		if rec.code == http.StatusUnauthorized {
			p.n401.mu.Lock()
			p.n401.n++
			p.n401.mu.Unlock()
		}
	}))
	// The same server over the legacy HTTP+SSE transport, at SSEURL.
	p.SSEURL = p.hs.URL + "/sse"
	mux.Handle("/.well-known/oauth-protected-resource/sse", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.SSEURL, AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"tools"}}))
	mux.Handle("/sse", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: p.hs.URL + "/.well-known/oauth-protected-resource/sse"})(
		mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return peer }, nil)))
	return p
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(c int) { s.code = c; s.ResponseWriter.WriteHeader(c) }
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Browser is the user's browser for these servers: it follows an
// authorization URL (the AuthServer approves at once) back to the
// client's redirect.
func Browser(u string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
