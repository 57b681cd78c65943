package app

// Search across conversations: the find box (Ctrl+K) asks the service for
// the sessions whose messages contain the text (GET /v1/sessions/search),
// so it finds conversations the window has never opened.

import (
	"net/http"
	"net/url"
	"strings"

	"jarvis/api"
)

// SearchSessions returns the sessions whose user or assistant messages
// contain q, each with a snippet around the match, most recently updated
// first. Blank text finds nothing (the window then shows its list as is).
func (a *App) SearchSessions(q string) ([]api.SessionSearchHit, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return []api.SessionSearchHit{}, nil
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.SessionSearch
	if err := a.s.c.Do(ctx, http.MethodGet, "/v1/sessions/search?q="+url.QueryEscape(q), nil, &out); err != nil {
		return nil, friendly(err)
	}
	if out.Results == nil {
		out.Results = []api.SessionSearchHit{}
	}
	return out.Results, nil
}
