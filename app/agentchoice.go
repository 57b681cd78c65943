package app

// The modes and models picker of an ACP agent's conversation: the service
// keeps the choice with the session and sends it to the agent
// (GET and PUT /v1/sessions/{id}/agent-choice).

import (
	"net/http"
	"net/url"

	"jarvis/api"
)

// AgentChoices are the modes and models the conversation's ACP agent
// offers and the ones in use (or the kept choice when it is not running).
func (a *App) AgentChoices(sessionID string) (api.AgentChoices, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.AgentChoices
	err := a.s.c.Do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/agent-choice", nil, &out)
	return out, friendlyOrNil(err)
}

// ChooseForAgent sets the conversation's mode or model ("" leaves one as it
// is): kept with the session, sent to the agent at once when it runs.
func (a *App) ChooseForAgent(sessionID, mode, model string) (api.AgentChoices, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.AgentChoices
	err := a.s.c.Do(ctx, http.MethodPut, "/v1/sessions/"+url.PathEscape(sessionID)+"/agent-choice", api.AgentChoiceRequest{Mode: mode, Model: model}, &out)
	return out, friendlyOrNil(err)
}
