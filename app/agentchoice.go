package app

// The modes and models picker of an ACP agent's conversation: the service
// keeps the choice with the session and sends it to the agent
// (GET and PUT /v1/sessions/{id}/agent-choice).

import (
	"context"
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

// SignInMethods are the sign-in methods an ACP agent offered when it last
// refused to start a session.
type SignInMethods struct {
	Methods []SignInMethod `json:"methods"`
}

// SignInMethod is one of them (acpagent.AuthMethod on the wire).
type SignInMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Kind        string   `json:"kind"`
	Vars        []string `json:"vars,omitempty"`
	// Command, Args and Env are a terminal login's program (agentlogin.go);
	// Label is its title.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Label   string            `json:"label,omitempty"`
}

// AgentSignIn lists an ACP agent's sign-in methods (GET /v1/agents/{id}/sign-in).
func (a *App) AgentSignIn(agentID string) (SignInMethods, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out SignInMethods
	err := a.s.c.Do(ctx, http.MethodGet, "/v1/agents/"+url.PathEscape(agentID)+"/sign-in", nil, &out)
	return out, friendlyOrNil(err)
}

// SignInAgent stores the keys of one of the agent's key sign-in methods in
// the keyring; the agent signs in with them from its next start (send the
// message again). For a method the agent runs itself (no values), the
// agent signs in now (authenticate): codex-acp's ChatGPT login opens the
// browser and answers once the user is done, so this waits for them.
func (a *App) SignInAgent(agentID, methodID string, values map[string]string) error {
	ctx, cancel := context.WithTimeout(a.ctx, agentSignInWait)
	defer cancel()
	return friendlyOrNil(a.s.c.Do(ctx, http.MethodPut, "/v1/agents/"+url.PathEscape(agentID)+"/sign-in", api.SignInRequest{MethodID: methodID, Values: values}, nil))
}
