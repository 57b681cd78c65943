package service_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/service"
	"jarvis/service/secrets"
)

// TestKeyringlessSecretStorage: on a machine without a Secret Service the
// first-run key and a round-table agent's key are stored in the 0600
// fallback file instead of failing with 503 keyring_unavailable, and
// GET /v1/providers says the key is in the less protected file.
func TestKeyringlessSecretStorage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the Secret Service over D-Bus is the keyring on Linux")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	path := filepath.Join(t.TempDir(), "jarvis", "secrets.json")
	sec := secrets.New(func(string) string { return "" }, secrets.WithFile(path, nil))
	cfgPath := filepath.Join(filepath.Dir(path), "config.json")
	e := newEnv(t, withRTSecrets(sec), func(_ *env, o *service.Options) { o.ConfigPath = cfgPath })

	st, b := e.call("PUT", "/v1/providers", api.SetProviderRequest{Provider: "openai", APIKey: "sk-first-run"})
	if st != http.StatusOK {
		t.Fatalf("PUT /v1/providers: %d %s", st, b)
	}
	var info api.ProvidersInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if !info.OpenAIKeyStored || info.KeyStorage != secrets.InFile || info.SecretsFile != path {
		t.Fatalf("providers info: %s", b)
	}
	// The choice is in the config file for the next start; the key is not.
	cfg, err := os.ReadFile(cfgPath)
	if err != nil || !strings.Contains(string(cfg), `"defaultProvider": "openai"`) || !strings.Contains(string(cfg), `"apiKeyRef": "openai"`) || strings.Contains(string(cfg), "sk-first-run") {
		t.Fatalf("config file: %v\n%s", err, cfg)
	}

	_, url := newRTAgent(t, "x", "good", "")
	st, b = e.call("POST", "/api/v1/agents", api.RoundtableAgentRegistration{Name: "keyed", Domain: "d", BaseURL: url, APIKey: "k-123"})
	if st != http.StatusCreated || !strings.Contains(string(b), `"key_storage":"file"`) {
		t.Fatalf("registration with an api_key: %d %s", st, b)
	}
	if v, where, err := sec.Lookup("roundtable:keyed"); err != nil || v != "k-123" || where != secrets.InFile {
		t.Fatalf("round-table key: %q %q %v", v, where, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("fallback file: %v %v", fi, err)
	}
}
