package service_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"jarvis/service"
	"jarvis/service/config"
)

// TestSetProviderModelKeepsKey: the header's model switch saves only
// another model for the same server through PUT /v1/providers, without the
// key: the server's stored key stays referenced. Pointing the provider at
// another server without a key drops it (the key was for the old one).
func TestSetProviderModelKeepsKey(t *testing.T) {
	e := newEnv(t)
	base := e.upSrv.URL + "/v1"
	path := e.withConfigFile(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model","apiKeyRef":"openai-compatible"}}}`, base))
	put := func(baseURL, model string) config.Provider {
		body := fmt.Sprintf(`{"provider":"openai-compatible","baseUrl":%q,"model":%q}`, baseURL, model)
		if code, eb := doJSON(t, e, http.MethodPut, "/v1/providers", body, nil); code != http.StatusOK {
			t.Fatalf("put: %d %+v", code, eb)
		}
		c, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return c.Providers["openai-compatible"]
	}
	if p := put(base, "other-model"); p.APIKeyRef != "openai-compatible" || p.Model != "other-model" {
		t.Fatalf("same server, another model: %+v", p)
	}
	if p := put("http://127.0.0.1:9/v1", "other-model"); p.APIKeyRef != "" {
		t.Fatalf("another server: %+v", p)
	}
}

// withConfigFile restarts e's service on a config file holding text (so
// PUT /v1/providers rewrites it) and returns the file's path.
func (e *env) withConfigFile(text string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, "config.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.stop()
	e.start(func(e *env, o *service.Options) {
		c, err := config.Load(path)
		if err != nil {
			e.t.Fatal(err)
		}
		o.Config, o.ConfigPath = c, path
	})
	return path
}
