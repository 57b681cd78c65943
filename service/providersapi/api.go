// Package providersapi serves first-run setup (the desktop's setup panel):
// GET /v1/providers says what is configured and which local
// OpenAI-compatible servers answer on their default loopback ports; PUT
// /v1/providers stores an OpenAI key in the secret store, or points the
// default provider at a server, by rewriting only the "providers" and
// "defaultProvider" fields of the config file; POST /v1/providers/test is
// the panel's Test connection (test.go). It gets what it needs as explicit
// fields of API, never the service, and imports no runtime; only the root
// (package service) imports it and mounts its handlers.
package providersapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/internal/approved"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/secrets"
)

// API holds the setup routes' dependencies; its methods are
// httpapi.HandlerFunc. Config, SetConfig, Reload and HTTPClient are
// required.
type API struct {
	Config func() *config.Config // the current config
	// ConfigPath is the config file PUT /v1/providers rewrites; "" keeps
	// the change in the running config only (SetConfig).
	ConfigPath string
	SetConfig  func(*config.Config)    // replaces the running config
	Reload     func(path string) error // loads the file just rewritten
	// Approved keeps the config file's approved content (name
	// ApprovalName): what the setup page writes is approved as it is
	// written, and a file with changes the user has not approved is not
	// rewritten (that would approve them unseen). Nil: no approval.
	Approved     *approved.Store
	ApprovalName string
	Keys         Keys
	HTTPClient   *http.Client // probes of model servers
	// Problem says whether the default agent's model provider can run:
	// nil, or what is missing in plain words.
	Problem func() error

	mu sync.Mutex // serialises config file rewrites
}

// localServers are the default loopback endpoints of popular local model servers.
var localServers = []struct{ name, baseURL string }{
	{"Ollama", "http://127.0.0.1:11434/v1"},
	{"LM Studio", "http://127.0.0.1:1234/v1"},
	{"llama.cpp server", "http://127.0.0.1:8080/v1"},
}

// List is GET /v1/providers.
func (a *API) List(w http.ResponseWriter, r *http.Request) error {
	c := a.Config()
	out := api.ProvidersInfo{DefaultProvider: c.DefaultProvider, Providers: map[string]api.ProviderInfo{}, Discovered: []api.DiscoveredServer{}}
	for name, p := range c.Providers {
		out.Providers[name] = api.ProviderInfo{BaseURL: p.BaseURL, Model: p.Model, APIKeyRef: p.APIKeyRef}
	}
	if a.Problem != nil {
		err := a.Problem()
		out.Configured = err == nil
		if err != nil {
			out.Problem = err.Error()
		}
	}
	if a.Keys.Secrets != nil {
		ref := c.ResolvedChat(config.Agent{Chat: &config.Chat{Provider: config.ProviderOpenAI}}).APIKeyRef
		out.OpenAIKeyStored, out.KeyStorage, out.SecretsFile = a.Keys.stored(ref)
	}
	out.Discovered = a.discoverLocalServers(r.Context())
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// discoverLocalServers probes the default ports concurrently with a short
// timeout and lists the servers that answer /models, with their models.
func (a *API) discoverLocalServers(ctx context.Context) []api.DiscoveredServer {
	ctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	found := make([]*api.DiscoveredServer, len(localServers))
	var wg sync.WaitGroup
	for i, srv := range localServers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if models := a.probeModels(ctx, srv.baseURL, "").models; models != nil {
				found[i] = &api.DiscoveredServer{Name: srv.name, BaseURL: srv.baseURL, Models: models, EmbeddingModels: EmbeddingModels(models),
					Sizes: a.ModelSizes(ctx, srv.baseURL)}
			}
		}()
	}
	wg.Wait()
	out := []api.DiscoveredServer{}
	for _, f := range found {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// Set is PUT /v1/providers.
func (a *API) Set(w http.ResponseWriter, r *http.Request) error {
	var req api.SetProviderRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.Config().MaxBodyBytes); err != nil {
		return err
	}
	entry := config.Provider{Model: strings.TrimSpace(req.Model)}
	storeKey := func(ref, key string) error {
		entry.APIKeyRef = ref
		if _, err := a.Keys.Put(ref, key); err != nil {
			return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "could not store the key (%v); set %s in the service's environment instead", err, secrets.EnvName(ref))
		}
		return nil
	}
	switch req.Provider {
	case config.ProviderOpenAI:
		entry.APIKeyRef = "openai"
		if req.APIKey != "" {
			if err := storeKey(entry.APIKeyRef, strings.TrimSpace(req.APIKey)); err != nil {
				return err
			}
		}
	case config.ProviderOpenAICompatible:
		base, err := serverBaseURL(req.BaseURL)
		if err != nil {
			return err
		}
		if entry.Model == "" {
			return httpapi.Missing("model")
		}
		entry.BaseURL = base
		if req.APIKey != "" {
			if err := storeKey("openai-compatible", req.APIKey); err != nil {
				return err
			}
		}
	case "":
		return httpapi.Missing("provider")
	default:
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "provider must be openai or openai-compatible").With("field", "provider")
	}
	if err := a.save(req.Provider, entry); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return httpapi.Errorf(http.StatusConflict, "config_invalid", "the config file cannot be updated: %v", err)
		}
		return err
	}
	return a.List(w, r)
}

// save sets one provider and makes it the default, in the config file when
// there is one (other fields untouched, written atomically) and in the
// running config.
func (a *API) save(name string, p config.Provider) error {
	return a.rewrite(func(c *config.Config) {
		providers := map[string]config.Provider{}
		for k, v := range c.Providers {
			providers[k] = v
		}
		providers[name] = keepWindow(providers[name], p)
		c.Providers, c.DefaultProvider = providers, name
	}, func(doc map[string]json.RawMessage) error {
		providers := map[string]config.Provider{}
		if raw, ok := doc["providers"]; ok {
			if err := json.Unmarshal(raw, &providers); err != nil {
				return err // never replace providers the file has but this cannot read
			}
		}
		providers[name] = keepWindow(providers[name], p)
		doc["providers"], _ = json.Marshal(providers)
		doc["defaultProvider"], _ = json.Marshal(name)
		return nil
	})
}

// rewrite changes the configuration: the running one (running, on a copy)
// when there is no config file, else the file's JSON object (file; other
// fields untouched), checked, approved and written atomically, then
// reloaded. A file the user is fixing or changed without approval is never
// overwritten.
func (a *API) rewrite(running func(*config.Config), file func(map[string]json.RawMessage) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ConfigPath == "" {
		c := *a.Config()
		running(&c)
		a.SetConfig(&c)
		return nil
	}
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(a.ConfigPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if _, err := config.Parse(a.ConfigPath, b); err != nil {
			return err // never overwrite a file the user is in the middle of fixing
		}
		if a.Approved != nil {
			if ok, err := a.Approved.Check(a.ApprovalName, b); err != nil {
				return err
			} else if !ok {
				return httpapi.Errorf(http.StatusConflict, "config_not_approved",
					"the configuration file was changed outside Jarvis and that change is not approved yet; approve it (jarvis config approve) or undo it, then save again")
			}
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
	}
	if err := file(doc); err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := config.Parse(a.ConfigPath, out); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(a.ConfigPath), 0o700); err != nil {
		return err
	}
	out = append(out, '\n')
	if a.Approved != nil {
		// Approved before it is in place, so the reload applies it.
		if err := a.Approved.Approve(a.ApprovalName, out); err != nil {
			return err
		}
	}
	tmp := a.ConfigPath + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.ConfigPath); err != nil {
		return err
	}
	return a.Reload(a.ConfigPath)
}

// SetEmbedding is PUT /v1/memory/embeddings: memory finds notes by meaning
// with this model of a local (OpenAI-compatible) server, or by their words
// only when model is empty. Memory makes its vectors in the background
// (GET /v1/memory/embeddings shows the progress).
func (a *API) SetEmbedding(w http.ResponseWriter, r *http.Request) error {
	var req api.SetEmbeddingRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.Config().MaxBodyBytes); err != nil {
		return err
	}
	m := config.Memory{}
	if model := strings.TrimSpace(req.Model); model != "" {
		base, err := serverBaseURL(req.BaseURL)
		if err != nil {
			return err
		}
		m = config.Memory{EmbeddingProvider: config.ProviderOpenAICompatible, EmbeddingModel: model, EmbeddingBaseURL: base}
	}
	err := a.rewrite(func(c *config.Config) {
		c.Memory.EmbeddingProvider, c.Memory.EmbeddingModel, c.Memory.EmbeddingBaseURL = m.EmbeddingProvider, m.EmbeddingModel, m.EmbeddingBaseURL
	}, func(doc map[string]json.RawMessage) error {
		mem := map[string]json.RawMessage{}
		if raw, ok := doc["memory"]; ok {
			if err := json.Unmarshal(raw, &mem); err != nil {
				return err // never replace a memory section this cannot read
			}
		}
		delete(mem, "embeddingProvider")
		delete(mem, "embeddingModel")
		delete(mem, "embeddingBaseUrl")
		if m.EmbeddingModel != "" {
			mem["embeddingProvider"], _ = json.Marshal(m.EmbeddingProvider)
			mem["embeddingModel"], _ = json.Marshal(m.EmbeddingModel)
			mem["embeddingBaseUrl"], _ = json.Marshal(m.EmbeddingBaseURL)
		}
		doc["memory"], _ = json.Marshal(mem)
		return nil
	})
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return httpapi.Errorf(http.StatusConflict, "config_invalid", "the config file cannot be updated: %v", err)
		}
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.SetEmbeddingRequest{BaseURL: m.EmbeddingBaseURL, Model: m.EmbeddingModel})
}

// keepWindow keeps the contextWindow of a provider entry that the setup
// panel rewrites for the same model (it knows nothing of windows), and the
// key of the same server when none is given (the header's model switch
// saves only another model).
func keepWindow(old, p config.Provider) config.Provider {
	if p.ContextWindow == 0 && old.Model == p.Model {
		p.ContextWindow = old.ContextWindow
	}
	if p.APIKeyRef == "" && old.BaseURL == p.BaseURL {
		p.APIKeyRef = old.APIKeyRef
	}
	return p
}

// embeddingNames are parts of the names local servers give embedding
// models (Ollama's library, LM Studio's and llama.cpp's GGUF file names):
// nomic-embed-text, mxbai-embed-large, snowflake-arctic-embed,
// text-embedding-nomic-embed-text-v1.5, bge-m3, all-minilm, e5, gte.
var embeddingNames = []string{"embed", "bge-", "bge_", "minilm", "e5-", "gte-", "paraphrase-multilingual", "granite-embedding"}

// EmbeddingModels picks the models of a server's list that compute
// embeddings, by name (servers do not say), in the list's order.
func EmbeddingModels(models []string) []string {
	var out []string
	for _, m := range models {
		l := strings.ToLower(m)
		for _, n := range embeddingNames {
			if strings.Contains(l, n) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}
