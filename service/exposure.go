package service

import (
	"net/http"

	"jarvis/service/config"
	"jarvis/service/httpapi"
)

// exposed refuses an agent configured with apiExposed: false to clients of
// the HTTP API other than the window, on every route that starts or
// continues a conversation with it. The window's in-process service
// (Options.Window) has a token nothing else knows, so every client of it is
// the window; the headless service's clients are other programs.
// Delegation (agents_message) is not an HTTP client and is governed by the
// calling agent's agentAllowlist.
func (s *Service) exposed(a config.Agent) error {
	if s.window || a.APIExposed == nil || *a.APIExposed {
		return nil
	}
	return httpapi.Errorf(http.StatusForbidden, "agent_not_exposed",
		"agent %q is not available through the API (apiExposed: false in the config); use it from the Jarvis window", a.AgentID).
		With("agentId", a.AgentID)
}

// exposedSession is exposed for the agent a stored session belongs to (an
// agent no longer configured is the turn's own error).
func (s *Service) exposedSession(agentID string) error {
	if a, ok := s.cfg().Agent(agentID); ok {
		return s.exposed(a)
	}
	return nil
}
