package providersapi

// The setup panel's "Test connection": POST /v1/providers/test checks the
// provider the user is about to save, for real, by asking the server for
// its model list (GET {baseUrl}/models, with the key when there is one),
// and says what happened in plain words. Nothing is saved.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
)

// providerTestTimeout bounds the whole check: a person is waiting.
const providerTestTimeout = 8 * time.Second

// modelsAnswer is what GET {baseUrl}/models gave.
type modelsAnswer struct {
	models []string // sorted ids, when the answer was a model list
	status int      // HTTP status; 0 when no server answered
	err    error    // the transport error when no server answered
}

// probeModels asks baseURL for its model list with key (may be empty).
func (a *API) probeModels(ctx context.Context, baseURL, key string) modelsAnswer {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", nil)
	if err != nil {
		return modelsAnswer{err: err}
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := a.HTTPClient.Do(req)
	if err != nil {
		return modelsAnswer{err: err}
	}
	defer resp.Body.Close()
	out := modelsAnswer{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		return out
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body) != nil || body.Data == nil {
		return out // a 200 that is not a model list
	}
	out.models = []string{}
	for _, m := range body.Data {
		if m.ID != "" {
			out.models = append(out.models, m.ID)
		}
	}
	slices.Sort(out.models)
	return out
}

// ModelSizes asks an Ollama server (GET {root}/api/tags, the root being
// baseURL without its /v1) for its models' sizes in bytes, by name; nil
// when the server has no such list (LM Studio, llama.cpp).
func (a *API) ModelSizes(ctx context.Context, baseURL string) map[string]int64 {
	root := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/api/tags", nil)
	if err != nil {
		return nil
	}
	resp, err := a.HTTPClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var body struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
			Size  int64  `json:"size"`
		} `json:"models"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body) != nil || len(body.Models) == 0 {
		return nil
	}
	out := map[string]int64{}
	for _, m := range body.Models {
		if m.Size <= 0 {
			continue
		}
		for _, n := range []string{m.Name, m.Model} {
			if n != "" {
				out[n] = m.Size
			}
		}
	}
	return out
}

// Test is POST /v1/providers/test: the body of PUT /v1/providers →
// api.ProviderTest (200 whatever the server said).
func (a *API) Test(w http.ResponseWriter, r *http.Request) error {
	var req api.SetProviderRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.Config().MaxBodyBytes); err != nil {
		return err
	}
	c := a.Config()
	model, key := strings.TrimSpace(req.Model), strings.TrimSpace(req.APIKey)
	var base string
	switch req.Provider {
	case config.ProviderOpenAI:
		ch := c.ResolvedChat(config.Agent{Chat: &config.Chat{Provider: config.ProviderOpenAI}})
		base = ch.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		if model == "" {
			model = ch.Model
		}
		if key == "" { // the key saved before
			key, _ = a.Keys.Get(ch.APIKeyRef)
		}
		if key == "" {
			return httpapi.WriteJSON(w, http.StatusOK, api.ProviderTest{Kind: "no_key", BaseURL: base, Message: "Enter your OpenAI API key to test it."})
		}
	case config.ProviderOpenAICompatible:
		var err error
		if base, err = serverBaseURL(req.BaseURL); err != nil {
			return err
		}
		// A key saved for this same server is used; never one saved for another.
		if cur := c.Providers[config.ProviderOpenAICompatible]; key == "" && cur.APIKeyRef != "" && strings.TrimRight(cur.BaseURL, "/") == strings.TrimRight(base, "/") {
			key, _ = a.Keys.Get(cur.APIKeyRef)
		}
	case "":
		return httpapi.Missing("provider")
	default:
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "provider must be openai or openai-compatible").With("field", "provider")
	}
	ctx, cancel := context.WithTimeout(r.Context(), providerTestTimeout)
	defer cancel()
	return httpapi.WriteJSON(w, http.StatusOK, describeProbe(base, model, key != "", a.probeModels(ctx, base, key)))
}

// serverBaseURL checks an OpenAI-compatible server's base URL as typed:
// http(s) with a host, or the 400 invalid_field the setup form shows.
func serverBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", httpapi.Errorf(http.StatusBadRequest, "invalid_field", "baseUrl must be an http(s) URL such as http://127.0.0.1:11434/v1").With("field", "baseUrl")
	}
	return u.String(), nil
}

// describeProbe says in plain words what a probe of base found.
func describeProbe(base, model string, withKey bool, a modelsAnswer) api.ProviderTest {
	out := api.ProviderTest{BaseURL: base, Models: a.models}
	name := serverName(base)
	var ne net.Error
	switch {
	case a.err != nil && errors.As(a.err, &ne) && ne.Timeout():
		out.Kind, out.Message = "timeout", fmt.Sprintf("%s did not answer within %d seconds.", name, int(providerTestTimeout/time.Second))
	case a.err != nil:
		out.Kind, out.Message = "unreachable", fmt.Sprintf("No server answers at %s. Is it running?", base)
	case (a.status == http.StatusUnauthorized || a.status == http.StatusForbidden) && withKey:
		out.Kind, out.Message = "auth", fmt.Sprintf("%s refused the key (HTTP %d). Check it and try again.", name, a.status)
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		out.Kind, out.Message = "auth", fmt.Sprintf("%s wants an API key (HTTP %d).", name, a.status)
	case a.models == nil:
		out.Kind, out.Message = "not_openai", fmt.Sprintf("Something answers at %s, but not as an OpenAI-compatible server (HTTP %d for /models). Check the base URL; it usually ends in /v1.", base, a.status)
	case model == "":
		out.OK, out.Kind, out.Message = true, "ok", fmt.Sprintf("Reached %s: %s. Choose a model.", name, countModels(a.models))
	case hasModel(a.models, model):
		out.OK, out.Kind, out.Message = true, "ok", fmt.Sprintf("Reached %s: model %s found.", name, model)
	default:
		out.Kind, out.Message = "model_missing", fmt.Sprintf("Reached %s, but it has no model %q. It has %s.", name, model, listModels(a.models))
	}
	return out
}

// serverName names a server for people: a known local server by its port,
// else its address.
func serverName(base string) string {
	for _, l := range localServers {
		if strings.TrimRight(l.baseURL, "/") == strings.TrimRight(base, "/") {
			return l.name + " at " + base
		}
	}
	if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
		return "OpenAI"
	}
	return "the server at " + base
}

// hasModel matches a model id as Ollama lists it too ("llama3" is
// "llama3:latest").
func hasModel(models []string, m string) bool {
	return slices.Contains(models, m) || (!strings.Contains(m, ":") && slices.Contains(models, m+":latest"))
}

func countModels(models []string) string {
	if len(models) == 0 {
		return "it has no models yet"
	}
	return fmt.Sprintf("%d %s (%s)", len(models), map[bool]string{true: "model", false: "models"}[len(models) == 1], listModels(models))
}

// listModels shows at most ten model ids.
func listModels(models []string) string {
	if len(models) == 0 {
		return "none"
	}
	if len(models) > 10 {
		return strings.Join(models[:10], ", ") + fmt.Sprintf(" and %d more", len(models)-10)
	}
	return strings.Join(models, ", ")
}
