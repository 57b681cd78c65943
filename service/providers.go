package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/secrets"
)

// First-run setup (the desktop's setup panel): GET /v1/providers says what is
// configured and which local OpenAI-compatible servers answer on their
// default loopback ports; PUT /v1/providers stores an OpenAI key in the OS
// keyring, or points the default provider at a server, by rewriting only the
// "providers" and "defaultProvider" fields of the config file.

// localServers are the default loopback endpoints of popular local model servers.
var localServers = []struct{ name, baseURL string }{
	{"Ollama", "http://127.0.0.1:11434/v1"},
	{"LM Studio", "http://127.0.0.1:1234/v1"},
	{"llama.cpp server", "http://127.0.0.1:8080/v1"},
}

// handleProviders is GET /v1/providers.
func (s *Service) handleProviders(w http.ResponseWriter, r *http.Request) error {
	c := s.cfg()
	out := api.ProvidersInfo{DefaultProvider: c.DefaultProvider, Providers: map[string]api.ProviderInfo{}, Discovered: []api.DiscoveredServer{}}
	for name, p := range c.Providers {
		out.Providers[name] = api.ProviderInfo{BaseURL: p.BaseURL, Model: p.Model, APIKeyRef: p.APIKeyRef}
	}
	if a, err := s.agentForNewSession(""); err == nil {
		_, _, perr := s.providerFor(a)
		out.Configured = perr == nil
		if perr != nil {
			out.Problem = perr.Error()
		}
	}
	if s.secrets != nil {
		ref := c.ResolvedChat(config.Agent{Chat: &config.Chat{Provider: config.ProviderOpenAI}}).APIKeyRef
		if l, ok := s.rawSecrets.(secretLocator); ok {
			_, where, err := l.Lookup(ref)
			out.OpenAIKeyStored = err == nil
			if err == nil {
				out.KeyStorage = where
			}
		} else {
			_, err := s.secrets.Get(ref)
			out.OpenAIKeyStored = err == nil
		}
		if f, ok := s.rawSecrets.(interface{ FilePath() string }); ok && out.KeyStorage == "file" {
			out.SecretsFile = f.FilePath()
		}
	}
	out.Discovered = s.discoverLocalServers(r.Context())
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// discoverLocalServers probes the default ports concurrently with a short
// timeout and lists the servers that answer /models, with their models.
func (s *Service) discoverLocalServers(ctx context.Context) []api.DiscoveredServer {
	ctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	found := make([]*api.DiscoveredServer, len(localServers))
	var wg sync.WaitGroup
	for i, srv := range localServers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			models, err := s.listModels(ctx, srv.baseURL)
			if err == nil {
				found[i] = &api.DiscoveredServer{Name: srv.name, BaseURL: srv.baseURL, Models: models}
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

func (s *Service) listModels(ctx context.Context, baseURL string) ([]string, error) {
	a := s.probeModels(ctx, baseURL, "")
	if a.models == nil {
		return nil, fmt.Errorf("%s/models: no model list", baseURL)
	}
	return a.models, nil
}

// handleSetProvider is PUT /v1/providers.
func (s *Service) handleSetProvider(w http.ResponseWriter, r *http.Request) error {
	var req api.SetProviderRequest
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	entry := config.Provider{Model: strings.TrimSpace(req.Model)}
	switch req.Provider {
	case config.ProviderOpenAI:
		entry.APIKeyRef = "openai"
		if req.APIKey != "" {
			if _, err := s.putSecret(entry.APIKeyRef, strings.TrimSpace(req.APIKey)); err != nil {
				return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "could not store the key (%v); set %s in the service's environment instead", err, secrets.EnvName(entry.APIKeyRef))
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
			entry.APIKeyRef = "openai-compatible"
			if _, err := s.putSecret(entry.APIKeyRef, req.APIKey); err != nil {
				return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "could not store the key (%v); set %s in the service's environment instead", err, secrets.EnvName(entry.APIKeyRef))
			}
		}
	case "":
		return httpapi.Missing("provider")
	default:
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "provider must be openai or openai-compatible").With("field", "provider")
	}
	if err := s.saveProvider(req.Provider, entry); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return httpapi.Errorf(http.StatusConflict, "config_invalid", "the config file cannot be updated: %v", err)
		}
		return err
	}
	return s.handleProviders(w, r)
}

// saveProvider sets one provider and makes it the default, in the config
// file when there is one (other fields untouched, written atomically) and in
// the running config.
func (s *Service) saveProvider(name string, p config.Provider) error {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if s.configPath == "" {
		c := *s.cfg()
		c.Providers = map[string]config.Provider{}
		for k, v := range s.cfg().Providers {
			c.Providers[k] = v
		}
		c.Providers[name] = keepWindow(c.Providers[name], p)
		c.DefaultProvider = name
		s.SetConfig(&c)
		return nil
	}
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(s.configPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if _, err := config.Parse(s.configPath, b); err != nil {
			return err // never overwrite a file the user is in the middle of fixing
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
	}
	providers := map[string]config.Provider{}
	if raw, ok := doc["providers"]; ok {
		if err := json.Unmarshal(raw, &providers); err != nil {
			return err // never replace providers the file has but this cannot read
		}
	}
	providers[name] = keepWindow(providers[name], p)
	doc["providers"], _ = json.Marshal(providers)
	doc["defaultProvider"], _ = json.Marshal(name)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := config.Parse(s.configPath, out); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.configPath), 0o700); err != nil {
		return err
	}
	tmp := s.configPath + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.configPath); err != nil {
		return err
	}
	return s.ReloadConfig(s.configPath)
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

// secretWriter is what storing a key needs beyond Secrets.Get; the keyring
// store (secrets.Store) has it, a read-only Secrets does not.
type secretWriter interface {
	Set(ref, value string) error
	Delete(ref string) error
}

// secretPutter is a secretWriter that says where a value went (secrets.InKeyring
// or secrets.InFile, the less protected fallback file).
type secretPutter interface {
	Put(ref, value string) (where string, err error)
}

// secretLocator is a Secrets that says where a value was found.
type secretLocator interface {
	Lookup(ref string) (value, where string, err error)
}

// putSecret stores value under ref and says where it went ("" when the
// store does not say).
func (s *Service) putSecret(ref, value string) (string, error) {
	if p, ok := s.rawSecrets.(secretPutter); ok {
		s.red.Add(value)
		return p.Put(ref, value)
	}
	if w, ok := s.secrets.(secretWriter); ok {
		return "", w.Set(ref, value)
	}
	return "", errors.New("this service has no writable secret store")
}

// deleteSecret removes ref from the secret store, when the store can.
func (s *Service) deleteSecret(ref string) error {
	if w, ok := s.secrets.(secretWriter); ok {
		return w.Delete(ref)
	}
	return nil
}
