package providersapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"jarvis/api"
	"jarvis/internal/testhttp"
	"jarvis/internal/testpeer"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/providersapi"
	"jarvis/service/redact"
)

// env is the setup routes over a real config file (or none), the in-memory
// secret store and the service's handler adapter.
type env struct {
	conf    atomic.Pointer[config.Config]
	secrets *testpeer.Secrets
	red     *redact.Set
	srv     *httptest.Server
	path    string
}

// newEnv serves the routes; configJSON "" runs without a config file, and
// readOnly gives a secret store that cannot store.
func newEnv(t *testing.T, configJSON string, readOnly bool) *env {
	t.Helper()
	e := &env{secrets: testpeer.NewSecrets(nil), red: &redact.Set{}}
	e.conf.Store(config.Defaults())
	if configJSON != "" {
		e.path = filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(e.path, []byte(configJSON), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(e.path)
		if err != nil {
			t.Fatal(err)
		}
		e.conf.Store(c)
	}
	var st redact.Store = e.secrets
	if readOnly {
		st = struct{ redact.Store }{e.secrets} // Get only
	}
	a := &providersapi.API{Config: e.conf.Load, ConfigPath: e.path, SetConfig: e.conf.Store,
		Reload: func(path string) error {
			c, err := config.Load(path)
			if err == nil {
				e.conf.Store(c)
			}
			return err
		},
		Keys: providersapi.Keys{Secrets: st, Red: e.red}, HTTPClient: &http.Client{}}
	mux, log := http.NewServeMux(), slog.New(slog.DiscardHandler)
	mux.Handle("GET /v1/providers", httpapi.Adapt(log, a.List))
	mux.Handle("PUT /v1/providers", httpapi.Adapt(log, a.Set))
	mux.Handle("POST /v1/providers/test", httpapi.Adapt(log, a.Test))
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) do(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	testhttp.Do(t, method, e.srv.URL+path, body, want, out)
}

// fails checks that PUT /v1/providers with body fails with code on field.
func (e *env) fails(t *testing.T, body string, status int, code, field string) {
	t.Helper()
	if d := testhttp.Fails(t, "PUT", e.srv.URL+"/v1/providers", body, status, code); field != "" && d["field"] != field {
		t.Fatalf("PUT %s: details %v, want field %q", body, d, field)
	}
}

// TestSetProviderWritesKeyAndConfig: an OpenAI key goes to the secret store
// (and the redactor), never to the file; the file's other fields stay; a
// server's contextWindow survives a rewrite for the same model.
func TestSetProviderWritesKeyAndConfig(t *testing.T) {
	e := newEnv(t, `{"maxToolSteps": 7, "providers": {"openai-compatible": {"baseUrl": "http://127.0.0.1:9/v1", "model": "m1", "contextWindow": 4096}}}`, false)
	var info api.ProvidersInfo
	e.do(t, "PUT", "/v1/providers", `{"provider": "openai", "apiKey": " sk-secret-1 ", "model": "gpt-x"}`, http.StatusOK, &info)
	if v, ok := e.secrets.Has("openai"); !ok || v != "sk-secret-1" {
		t.Fatalf("stored key %q %v", v, ok)
	}
	if e.red.String("key sk-secret-1") == "key sk-secret-1" {
		t.Fatal("the redactor did not learn the stored key")
	}
	b, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-secret-1") || !strings.Contains(string(b), `"maxToolSteps": 7`) {
		t.Fatalf("config file:\n%s", b)
	}
	if !info.OpenAIKeyStored || info.DefaultProvider != "openai" || info.Providers["openai"].Model != "gpt-x" || info.Providers["openai"].APIKeyRef != "openai" {
		t.Fatalf("answer %+v", info)
	}

	e.do(t, "PUT", "/v1/providers", `{"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "m1"}`, http.StatusOK, &info)
	c := e.conf.Load() // reloaded from the file
	if p := c.Providers["openai-compatible"]; c.DefaultProvider != "openai-compatible" || p.ContextWindow != 4096 || p.Model != "m1" {
		t.Fatalf("reloaded config: default %q, %+v", c.DefaultProvider, p)
	}
	if c.MaxToolSteps != 7 || c.Providers["openai"].Model != "gpt-x" {
		t.Fatalf("other fields lost: %+v", c)
	}
	if _, ok := e.secrets.Has("openai-compatible"); ok {
		t.Fatal("a key was stored though none was given")
	}
}

// TestSetProviderWithoutFile: with no config file the change stays in the
// running config.
func TestSetProviderWithoutFile(t *testing.T) {
	e := newEnv(t, "", false)
	e.do(t, "PUT", "/v1/providers", `{"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "m2", "apiKey": "k-2"}`, http.StatusOK, nil)
	c := e.conf.Load()
	if p := c.Providers["openai-compatible"]; c.DefaultProvider != "openai-compatible" || p.Model != "m2" || p.APIKeyRef != "openai-compatible" {
		t.Fatalf("running config: %q %+v", c.DefaultProvider, p)
	}
	if v, _ := e.secrets.Has("openai-compatible"); v != "k-2" {
		t.Fatalf("stored key %q", v)
	}
}

// TestSetProviderErrors: bad input, a read-only secret store and a config
// file the user is fixing each get their envelope; the file is not touched.
func TestSetProviderErrors(t *testing.T) {
	e := newEnv(t, `{"maxToolSteps": 3}`, false)
	e.fails(t, `{}`, http.StatusBadRequest, "missing_field", "provider")
	e.fails(t, `{"provider": "anthropic"}`, http.StatusBadRequest, "invalid_field", "provider")
	e.fails(t, `{"provider": "openai-compatible", "baseUrl": "ftp://x/v1", "model": "m"}`, http.StatusBadRequest, "invalid_field", "baseUrl")
	e.fails(t, `{"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1"}`, http.StatusBadRequest, "missing_field", "model")

	broken := `{"maxToolSteps": "three"}`
	if err := os.WriteFile(e.path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	e.fails(t, `{"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}`, http.StatusConflict, "config_invalid", "")
	if b, _ := os.ReadFile(e.path); string(b) != broken {
		t.Fatalf("a file being fixed was rewritten:\n%s", b)
	}

	ro := newEnv(t, "", true)
	ro.fails(t, `{"provider": "openai", "apiKey": "sk-1"}`, http.StatusServiceUnavailable, "keyring_unavailable", "")
}

// TestConnection: Test connection against a real OpenAI-compatible
// upstream that wants a key: refused without it, found with it, the model
// missing, the key saved for the same server used; a closed port is
// unreachable.
func TestConnection(t *testing.T) {
	peer := testpeer.NewOpenAI()
	peer.APIKey, peer.Model = "sk-peer", "llama3:latest"
	up := httptest.NewServer(peer)
	defer up.Close()
	e := newEnv(t, "", false)
	probe := func(body string) api.ProviderTest {
		t.Helper()
		var out api.ProviderTest
		e.do(t, "POST", "/v1/providers/test", body, http.StatusOK, &out)
		return out
	}
	base := up.URL + "/v1"
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + base + `", "model": "llama3"}`); got.OK || got.Kind != "auth" {
		t.Fatalf("without a key: %+v", got)
	}
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + base + `", "model": "llama3", "apiKey": "sk-wrong"}`); got.Kind != "auth" || !strings.Contains(got.Message, "refused the key") {
		t.Fatalf("a wrong key: %+v", got)
	}
	got := probe(`{"provider": "openai-compatible", "baseUrl": "` + base + `", "model": "llama3", "apiKey": "sk-peer"}`)
	if !got.OK || got.Kind != "ok" || len(got.Models) != 1 || got.Models[0] != "llama3:latest" {
		t.Fatalf("the right key: %+v", got)
	}
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + base + `", "model": "mistral", "apiKey": "sk-peer"}`); got.OK || got.Kind != "model_missing" {
		t.Fatalf("a model the server lacks: %+v", got)
	}

	// The key saved for this server is used; the one of another is not.
	e.do(t, "PUT", "/v1/providers", `{"provider": "openai-compatible", "baseUrl": "`+base+`", "model": "llama3", "apiKey": "sk-peer"}`, http.StatusOK, nil)
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + base + `/", "model": "llama3"}`); !got.OK {
		t.Fatalf("with the saved key: %+v", got)
	}
	other := httptest.NewServer(peer)
	defer other.Close()
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + other.URL + `/v1", "model": "llama3"}`); got.Kind != "auth" {
		t.Fatalf("another server got the saved key: %+v", got)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + closed.URL + `/v1"}`); got.Kind != "unreachable" {
		t.Fatalf("a closed port: %+v", got)
	}
	html := httptest.NewServer(http.NotFoundHandler())
	defer html.Close()
	if got := probe(`{"provider": "openai-compatible", "baseUrl": "` + html.URL + `"}`); got.Kind != "not_openai" {
		t.Fatalf("not a model server: %+v", got)
	}
	if got := probe(`{"provider": "openai"}`); got.Kind != "no_key" {
		t.Fatalf("OpenAI with no key saved: %+v", got)
	}
	var eb api.ErrorBody
	e.do(t, "POST", "/v1/providers/test", `{"provider": "openai-compatible", "baseUrl": "not a url"}`, http.StatusBadRequest, &eb)
	if eb.Error.Code != "invalid_field" || eb.Error.Details["field"] != "baseUrl" {
		t.Fatalf("bad base URL: %+v", eb.Error)
	}
}

// TestList: what is configured and the stored key are reported; the
// default agent's provider problem is said in plain words.
func TestList(t *testing.T) {
	e := newEnv(t, "", false)
	var info api.ProvidersInfo
	e.do(t, "GET", "/v1/providers", "", http.StatusOK, &info)
	if info.OpenAIKeyStored || info.DefaultProvider != "openai" || info.Discovered == nil {
		t.Fatalf("fresh: %+v", info)
	}
	if err := e.secrets.Set("openai", "sk-x"); err != nil {
		t.Fatal(err)
	}
	e.do(t, "GET", "/v1/providers", "", http.StatusOK, &info)
	if !info.OpenAIKeyStored {
		t.Fatalf("stored key not seen: %+v", info)
	}
}

// TestKeys: Put and Delete go to a writable store; a read-only one says it
// cannot store.
func TestKeys(t *testing.T) {
	st, red := testpeer.NewSecrets(nil), &redact.Set{}
	k := providersapi.Keys{Secrets: st, Red: red}
	if _, err := k.Put("rt-key", "v-123456"); err != nil {
		t.Fatal(err)
	}
	if red.String("v-123456") == "v-123456" {
		t.Fatal("the redactor did not learn a stored value")
	}
	if v, err := k.Get("rt-key"); err != nil || v != "v-123456" {
		t.Fatalf("get %q %v", v, err)
	}
	if err := k.Delete("rt-key"); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Has("rt-key"); ok {
		t.Fatal("deleted key still stored")
	}
	if _, err := (providersapi.Keys{Secrets: struct{ redact.Store }{st}, Red: red}).Put("x", "y"); err == nil {
		t.Fatal("a read-only store accepted a key")
	}
	if _, err := (providersapi.Keys{Red: red}).Get("x"); err == nil {
		t.Fatal("no store, yet a value")
	}
}

// The embedding models of a local server's list are told apart from its
// chat models by name, as Ollama, LM Studio and llama.cpp name them.
func TestEmbeddingModelsByName(t *testing.T) {
	got := providersapi.EmbeddingModels([]string{"llama3.2:latest", "nomic-embed-text:latest", "qwen2.5:7b", "bge-m3:latest", "mxbai-embed-large",
		"text-embedding-nomic-embed-text-v1.5", "all-minilm:l6-v2", "snowflake-arctic-embed:33m", "gemma3:4b", "phi4-mini"})
	want := []string{"nomic-embed-text:latest", "bge-m3:latest", "mxbai-embed-large", "text-embedding-nomic-embed-text-v1.5", "all-minilm:l6-v2", "snowflake-arctic-embed:33m"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := providersapi.EmbeddingModels([]string{"llama3.2", "mistral"}); got != nil {
		t.Fatalf("chat models taken for embedding models: %v", got)
	}
}

// The setup's model chips show each model's size where the server lists it:
// Ollama's /api/tags (its documented shape), beside its OpenAI-compatible
// /v1; a server without that list gives none.
func TestModelSizesFromOllamasTags(t *testing.T) {
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","modified_at":"2026-11-01T10:00:00Z","size":2019393189,"digest":"a80c4f17acd5"},{"name":"nomic-embed-text:latest","model":"nomic-embed-text:latest","size":274302450}]}`))
	}))
	t.Cleanup(ollama.Close)
	a := &providersapi.API{HTTPClient: ollama.Client()}
	got := a.ModelSizes(t.Context(), ollama.URL+"/v1")
	if got["llama3.2:latest"] != 2019393189 || got["nomic-embed-text:latest"] != 274302450 || len(got) != 2 {
		t.Fatalf("sizes %v", got)
	}
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	if got := a.ModelSizes(t.Context(), other.URL+"/v1"); got != nil {
		t.Fatalf("a server without /api/tags gave sizes %v", got)
	}
}
