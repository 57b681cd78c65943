package sessionsapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// Create is POST /v1/sessions: the same jarvis_session_id always maps to
// the same general_session_id; preferred_session_id resumes a session that
// exists.
func (a *API) Create(w http.ResponseWriter, r *http.Request) error {
	var req api.CreateSessionRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.maxBody()); err != nil {
		return err
	}
	if req.JarvisSessionID == "" {
		return httpapi.Missing("jarvis_session_id")
	}
	if len(req.JarvisSessionID) > turn.MaxIDLen || !utf8.ValidString(req.JarvisSessionID) {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "jarvis_session_id must be valid UTF-8 of at most %d bytes", turn.MaxIDLen).With("field", "jarvis_session_id")
	}
	ctx := r.Context()
	if req.PreferredSessionID != "" {
		sess, err := a.Store.Session(ctx, req.PreferredSessionID)
		if err == nil && sess.DeletedAt == "" {
			if err := a.exposedSession(sess.AgentID); err != nil {
				return err
			}
			return httpapi.WriteJSON(w, http.StatusOK, api.CreateSessionResponse{GeneralSessionID: sess.ID})
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	agent, err := AgentFor(a.Config(), req.AgentID)
	if err != nil {
		return err
	}
	if err := a.exposed(agent); err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		sess, err := a.Store.SessionByJarvisID(ctx, req.JarvisSessionID)
		if err == nil && sess.DeletedAt == "" {
			if err := a.exposedSession(sess.AgentID); err != nil {
				return err
			}
			return httpapi.WriteJSON(w, http.StatusOK, api.CreateSessionResponse{GeneralSessionID: sess.ID})
		}
		if err == nil { // mapped to a deleted session: start afresh
			if err := a.Store.ReleaseJarvisID(ctx, req.JarvisSessionID); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		created, err := a.Store.CreateSession(ctx, store.Session{ID: turn.NewID("g_"), JarvisSessionID: req.JarvisSessionID, AgentID: agent.AgentID})
		if errors.Is(err, store.ErrConflict) {
			continue // a concurrent request mapped it first: read its answer
		}
		if err != nil {
			return err
		}
		return httpapi.WriteJSON(w, http.StatusCreated, api.CreateSessionResponse{GeneralSessionID: created.ID, Created: true})
	}
	return httpapi.Errorf(http.StatusConflict, "conflict", "could not map jarvis_session_id; retry")
}

// AgentFor returns the agent c names id (400 unknown_agent when none), or
// for an empty id the default one ("general", else the first configured
// agent).
func AgentFor(c *config.Config, id string) (config.Agent, error) {
	if id != "" {
		a, ok := c.Agent(id)
		if !ok {
			return a, httpapi.Errorf(http.StatusBadRequest, "unknown_agent", "no agent %q is configured", id).With("field", "agent_id")
		}
		return a, nil
	}
	if a, ok := c.Agent("general"); ok {
		return a, nil
	}
	return c.Agents[0], nil
}

var externalIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidateSessionID checks a user-provided session id (docs/protocols/external-agents.md): trimmed,
// non-empty, at most 128 characters of [A-Za-z0-9_-]. It returns the trimmed id.
func ValidateSessionID(id string) (string, error) {
	id = strings.TrimSpace(id)
	switch {
	case id == "":
		return "", errors.New("sessionId must not be empty")
	case len(id) > 128:
		return "", fmt.Errorf("sessionId is %d characters long; the limit is 128", len(id))
	case !externalIDPattern.MatchString(id):
		return "", errors.New("sessionId may contain only letters A-Z a-z, digits 0-9, '_' and '-'")
	}
	return id, nil
}

// Operations is docs/protocols/external-agents.md's POST /api/plugins/sessions/operations/create
// {agentId, sessionId?}: with a sessionId it creates or attaches that session
// (idempotent; a deleted one is revived; one of another agent is 409), without
// one it creates a new session. The answer is 201 {ok:true, result:{...}}.
func (a *API) Operations(w http.ResponseWriter, r *http.Request) error {
	var req api.CreateOperationRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.maxBody()); err != nil {
		return err
	}
	if req.AgentID == "" {
		return httpapi.Missing("agentId")
	}
	agent, ok := a.Config().Agent(req.AgentID)
	if !ok {
		return httpapi.Errorf(http.StatusBadRequest, "unknown_agent", "no agent %q is configured", req.AgentID).With("field", "agentId")
	}
	if err := a.exposed(agent); err != nil {
		return err
	}
	ctx := r.Context()
	created := func(sess store.Session) error {
		return httpapi.WriteJSON(w, http.StatusCreated, api.CreateOperationResponse{OK: true, Result: Summary(sess)})
	}
	if req.SessionID == nil {
		sess, err := a.Store.CreateSession(ctx, store.Session{ID: turn.NewID("g_"), AgentID: agent.AgentID})
		if err != nil {
			return err
		}
		return created(sess)
	}
	id, err := ValidateSessionID(*req.SessionID)
	if err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_session_id", "%s", err.Error()).With("field", "sessionId")
	}
	for attempt := 0; attempt < 2; attempt++ {
		sess, err := a.Store.Session(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			sess, err = a.Store.CreateSession(ctx, store.Session{ID: id, AgentID: agent.AgentID})
			if errors.Is(err, store.ErrConflict) {
				continue // created concurrently: attach to it
			}
			if err != nil {
				return err
			}
			return created(sess)
		case err != nil:
			return err
		case sess.AgentID != agent.AgentID:
			return httpapi.Errorf(http.StatusConflict, "session_agent_mismatch", "session %q belongs to agent %q, not %q", id, sess.AgentID, agent.AgentID).
				With("field", "sessionId").With("agentId", sess.AgentID)
		}
		if sess.DeletedAt != "" {
			if err := a.Store.ReviveSession(ctx, id); err != nil {
				return err
			}
			if sess, err = a.Store.Session(ctx, id); err != nil {
				return err
			}
		}
		return created(sess)
	}
	return httpapi.Errorf(http.StatusConflict, "conflict", "session %q is being created concurrently; retry", id)
}
