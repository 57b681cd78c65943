package app

// Pinning a conversation: the service keeps the pin (PATCH
// /v1/sessions/{id} with "pinned"); the window lists pinned ones first.

import (
	"net/http"
	"net/url"

	"jarvis/api"
)

// PinSession pins or unpins a session.
func (a *App) PinSession(sessionID string, pinned bool) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	return friendlyOrNil(a.s.c.Do(ctx, http.MethodPatch, "/v1/sessions/"+url.PathEscape(sessionID), api.UpdateSessionRequest{Pinned: &pinned}, nil))
}
