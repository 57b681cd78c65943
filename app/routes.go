package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"jarvis/api"
)

// The shapes below are the service's additions for the desktop (session
// list, transcript, agent list, attach). They live here rather than in api/
// until the service's own wire types for them settle.

// The wire shapes of these routes are api's (AgentInfo, SessionSummary,
// Transcript); the frontend receives them as they are.
type (
	Agent   = api.AgentInfo
	Session = api.SessionSummary
)

// svc wraps the typed client with the routes api/ does not cover yet.
type svc struct{ c *api.Client }

// notFound reports a 404/405 answer: the route is not there (yet).
func notFound(err error) bool {
	var se *api.StatusError
	return errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed) && se.Err.Code != "session_not_found"
}

func (s svc) agents(ctx context.Context) ([]Agent, error) {
	out, err := s.agentList(ctx)
	return out.Agents, err
}

// session is GET /v1/sessions/{id}.
func (s svc) session(ctx context.Context, id string) (Session, error) {
	var out Session
	err := s.c.Do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// agentList is GET /v1/agents: the agents and the service's config warning.
func (s svc) agentList(ctx context.Context) (api.AgentList, error) {
	var out api.AgentList
	err := s.c.Do(ctx, http.MethodGet, "/v1/agents", nil, &out)
	return out, err
}

func (s svc) sessions(ctx context.Context, agentID string) ([]Session, error) {
	var out api.SessionList
	p := "/v1/sessions"
	if agentID != "" {
		p += "?agentId=" + url.QueryEscape(agentID)
	}
	err := s.c.Do(ctx, http.MethodGet, p, nil, &out)
	return out.Sessions, err
}

func (s svc) sessionsPage(ctx context.Context, agentID, cursor string, limit int) (api.SessionList, error) {
	var out api.SessionList
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if agentID != "" {
		q.Set("agentId", agentID)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	err := s.c.Do(ctx, http.MethodGet, "/v1/sessions?"+q.Encode(), nil, &out)
	return out, err
}

func (s svc) messages(ctx context.Context, id string) (api.Transcript, error) {
	var out api.Transcript
	err := s.c.Do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id)+"/messages", nil, &out)
	return out, err
}

func (s svc) rename(ctx context.Context, id, name string) error {
	return s.c.Do(ctx, http.MethodPatch, "/v1/sessions/"+url.PathEscape(id), map[string]string{"name": name}, nil)
}

func (s svc) clear(ctx context.Context, id string) error {
	return s.c.Do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/clear", map[string]any{}, nil)
}

func (s svc) delete(ctx context.Context, id string) error {
	return s.c.Do(ctx, http.MethodDelete, "/v1/sessions/"+url.PathEscape(id), nil, nil)
}

// attach is POST /api/plugins/sessions/operations/create (docs/protocols/external-agents.md).
func (s svc) attach(ctx context.Context, agentID, sessionID string) (Session, error) {
	var out api.CreateOperationResponse
	err := s.c.Do(ctx, http.MethodPost, "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: agentID, SessionID: &sessionID}, &out)
	if out.Result.SessionID == "" {
		out.Result.SessionID = sessionID
	}
	if out.Result.AgentID == "" {
		out.Result.AgentID = agentID
	}
	return out.Result, err
}
