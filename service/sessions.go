package service

import (
	"context"
	"errors"
	"net/http"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/store"
)

const maxIDLen = 256

// handleCreateSession is POST /v1/sessions: the same jarvis_session_id always
// maps to the same general_session_id; preferred_session_id resumes a session
// that exists.
func (s *Service) handleCreateSession(w http.ResponseWriter, r *http.Request) error {
	var req api.CreateSessionRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.JarvisSessionID == "" {
		return missing("jarvis_session_id")
	}
	if len(req.JarvisSessionID) > maxIDLen || !utf8.ValidString(req.JarvisSessionID) {
		return errorf(http.StatusBadRequest, "invalid_field", "jarvis_session_id must be valid UTF-8 of at most %d bytes", maxIDLen).with("field", "jarvis_session_id")
	}
	ctx := r.Context()
	if req.PreferredSessionID != "" {
		sess, err := s.st.Session(ctx, req.PreferredSessionID)
		if err == nil && sess.DeletedAt == "" {
			return writeJSON(w, http.StatusOK, api.CreateSessionResponse{GeneralSessionID: sess.ID})
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	agent, err := s.agentForNewSession(req.AgentID)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		sess, err := s.st.SessionByJarvisID(ctx, req.JarvisSessionID)
		if err == nil && sess.DeletedAt == "" {
			return writeJSON(w, http.StatusOK, api.CreateSessionResponse{GeneralSessionID: sess.ID})
		}
		if err == nil { // mapped to a deleted session: start afresh
			if err := s.st.ReleaseJarvisID(ctx, req.JarvisSessionID); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		created, err := s.st.CreateSession(ctx, store.Session{ID: newID("g_"), JarvisSessionID: req.JarvisSessionID, AgentID: agent.AgentID})
		if errors.Is(err, store.ErrConflict) {
			continue // a concurrent request mapped it first: read its answer
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, api.CreateSessionResponse{GeneralSessionID: created.ID, Created: true})
	}
	return errorf(http.StatusConflict, "conflict", "could not map jarvis_session_id; retry")
}

// agentForNewSession returns the named agent, or the default one ("general",
// else the first configured agent).
func (s *Service) agentForNewSession(id string) (config.Agent, error) {
	c := s.cfg()
	if id != "" {
		a, ok := c.Agent(id)
		if !ok {
			return a, errorf(http.StatusBadRequest, "unknown_agent", "no agent %q is configured", id).with("field", "agent_id")
		}
		return a, nil
	}
	if a, ok := c.Agent("general"); ok {
		return a, nil
	}
	return c.Agents[0], nil
}

// liveSession returns a session that exists and is not deleted, or a 404.
func (s *Service) liveSession(ctx context.Context, id, field string) (store.Session, error) {
	if id == "" {
		return store.Session{}, missing(field)
	}
	sess, err := s.st.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sess.DeletedAt != "") {
		return sess, errorf(http.StatusNotFound, "session_not_found", "no session %q", id).with("field", field)
	}
	return sess, err
}
