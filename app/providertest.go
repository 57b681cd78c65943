package app

// The setup panel's "Test connection" (POST /v1/providers/test): the
// service asks the chosen server for its models and says what it found.
// The key typed in is sent to the service for this one check, never stored
// or logged.

import (
	"net/http"
	"strings"

	"jarvis/api"
)

// TestProvider checks a provider before it is saved: the same fields as
// SetProvider. A server that fails the check is a result (OK false, the
// reason in Message), not an error; an error means the check itself could
// not be made.
func (a *App) TestProvider(req api.SetProviderRequest) (api.ProviderTest, error) {
	req.Provider = strings.TrimSpace(req.Provider)
	req.APIKey = strings.TrimSpace(req.APIKey)
	req.BaseURL = strings.TrimSpace(req.BaseURL)
	req.Model = strings.TrimSpace(req.Model)
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.ProviderTest
	if err := a.c.Do(ctx, http.MethodPost, "/v1/providers/test", req, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}
