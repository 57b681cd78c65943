package service_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service/config"
)

// "Test connection" asks the real server for its models and says in plain
// words what it found: the model is there, the model is missing (naming
// what there is), nobody answers, something answers that is not an
// OpenAI-compatible server, the key is refused or missing. Nothing is
// saved; a bad base URL or no provider is a 400.
func TestProviderTest(t *testing.T) {
	e := newEnv(t)
	keyed := testpeer.NewOpenAI()
	keyed.APIKey, keyed.Model = "sk-good", "gpt-4o-mini"
	keyedSrv := httptest.NewServer(keyed)
	defer keyedSrv.Close()
	notAPI := httptest.NewServer(http.NotFoundHandler())
	defer notAPI.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL + "/v1"
	gone.Close()
	// OpenAI itself is the keyed peer here.
	c, err := config.Parse("t.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"},"openai":{"baseUrl":%q}},"upstreamTimeoutSeconds":10}`,
		e.upSrv.URL+"/v1", keyedSrv.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	e.svc.SetConfig(c)

	up := e.upSrv.URL + "/v1"
	for _, tc := range []struct {
		body     string
		ok       bool
		kind     string
		contains string
	}{
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"test-model"}`, up), true, "ok", "Reached the server at " + up + ": model test-model found."},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q}`, up), true, "ok", "1 model (test-model). Choose a model."},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"llama3"}`, up), false, "model_missing", `has no model "llama3". It has test-model.`},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"m"}`, goneURL), false, "unreachable", "No server answers at " + goneURL},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"m"}`, notAPI.URL), false, "not_openai", "not as an OpenAI-compatible server (HTTP 404 for /models)"},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"gpt-4o-mini"}`, keyedSrv.URL+"/v1"), false, "auth", "wants an API key (HTTP 401)"},
		{fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"gpt-4o-mini","apiKey":"sk-good"}`, keyedSrv.URL+"/v1"), true, "ok", "model gpt-4o-mini found"},
		{`{"provider":"openai","apiKey":"sk-bad"}`, false, "auth", "refused the key (HTTP 401)"},
		{`{"provider":"openai","apiKey":"sk-good"}`, true, "ok", "model gpt-4o-mini found"},
		{`{"provider":"openai"}`, false, "no_key", "Enter your OpenAI API key"},
	} {
		var got api.ProviderTest
		if code, eb := doJSON(t, e, http.MethodPost, "/v1/providers/test", tc.body, &got); code != http.StatusOK {
			t.Fatalf("%s: %d %+v", tc.body, code, eb)
		}
		if got.OK != tc.ok || got.Kind != tc.kind || !strings.Contains(got.Message, tc.contains) {
			t.Fatalf("%s:\n got %+v\nwant ok=%v kind=%s containing %q", tc.body, got, tc.ok, tc.kind, tc.contains)
		}
	}
	for body, code := range map[string]string{`{"provider":"openai-compatible","baseUrl":"ftp://x"}`: "invalid_field", `{}`: "missing_field", `{"provider":"gemini"}`: "invalid_field"} {
		if status, eb := doJSON(t, e, http.MethodPost, "/v1/providers/test", body, nil); status != http.StatusBadRequest || eb.Error.Code != code {
			t.Fatalf("%s: %d %+v", body, status, eb)
		}
	}
	var info api.ProvidersInfo
	if err := e.c.Do(t.Context(), http.MethodGet, "/v1/providers", nil, &info); err != nil || info.DefaultProvider != "openai-compatible" || info.Providers["openai-compatible"].BaseURL != up {
		t.Fatalf("a test changed the configuration: %+v %v", info, err)
	}
}

// A key stored for the OpenAI-compatible provider is used to test that same
// server only: testing another base URL with the key field empty sends no
// key there (a typed URL must not collect the saved key).
func TestProviderTestKeepsStoredKeyToItsServer(t *testing.T) {
	keyed := testpeer.NewOpenAI()
	keyed.APIKey = "sk-stored"
	keyedSrv := httptest.NewServer(keyed)
	defer keyedSrv.Close()
	// Another server that wants a key, and records every Authorization it gets.
	var mu sync.Mutex
	var auths []string
	otherSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, `{"error":{"message":"no key","code":"invalid_api_key"}}`, http.StatusUnauthorized)
	}))
	defer otherSrv.Close()
	e := newEnv(t, withRTSecrets(testpeer.NewSecrets(map[string]string{"openai-compatible": "sk-stored"})))
	c, err := config.Parse("t.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model","apiKeyRef":"openai-compatible"}}}`, keyedSrv.URL+"/v1/")))
	if err != nil {
		t.Fatal(err)
	}
	e.svc.SetConfig(c)
	var got api.ProviderTest
	if code, eb := doJSON(t, e, http.MethodPost, "/v1/providers/test", fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"test-model"}`, keyedSrv.URL+"/v1"), &got); code != http.StatusOK || !got.OK {
		t.Fatalf("the configured server with the stored key: %d %+v %+v", code, got, eb)
	}
	if code, eb := doJSON(t, e, http.MethodPost, "/v1/providers/test", fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":"test-model"}`, otherSrv.URL+"/v1"), &got); code != http.StatusOK || got.Kind != "auth" || !strings.Contains(got.Message, "wants an API key") {
		t.Fatalf("another server: %d %+v %+v", code, got, eb)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) != 1 || auths[0] != "" {
		t.Fatalf("another server got %q, want one request without a key", auths)
	}
}
