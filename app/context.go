package app

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"jarvis/api"
)

// SessionContext reports a session's context use (tokens of the model's
// window) for the header's meter; nil for agents whose context the service
// does not manage (external, proxy, round table, CLI providers).
func (a *App) SessionContext(sessionID string) (*api.ContextInfo, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var d api.SessionDetail
	if err := a.c.Do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID), nil, &d); err != nil {
		return nil, friendly(err)
	}
	return d.Context, nil
}

// CompactSession summarizes a session's older messages now (the Compact
// button); instructions say what the summary should keep. It waits for the
// model, as long as a model call may take.
func (a *App) CompactSession(sessionID, instructions string) (api.CompactedEvent, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Minute)
	defer cancel()
	var out api.CompactedEvent
	err := a.c.Do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/compact", api.CompactRequest{Instructions: strings.TrimSpace(instructions)}, &out)
	return out, friendlyOrNil(err)
}

// compactions lists a session's compactions for its transcript lines; none
// when the service cannot (an older service, a non-chat session).
func (a *App) compactions(ctx context.Context, sessionID string) []api.CompactedEvent {
	var out api.CompactionList
	if err := a.c.Do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/compactions", nil, &out); err != nil || out.Compactions == nil {
		return []api.CompactedEvent{}
	}
	return out.Compactions
}
