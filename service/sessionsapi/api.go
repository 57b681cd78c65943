// Package sessionsapi serves the session routes no runtime owns: creating
// and attaching sessions (POST /v1/sessions and the external agents'
// operations/create), listing, reading, renaming, clearing and deleting
// them, their transcripts, search across them and the agent list. It gets
// what it needs as explicit fields of API (the store, the event hub, the
// config, a clock and a few functions of the root), never the service, and
// imports no runtime; only the root (package service) imports it and mounts
// its handlers in its route table.
package sessionsapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/store"
)

// API holds the session routes' dependencies; its methods are
// httpapi.HandlerFunc. Store, Hub, Config, Now, Log and AgentInfo are
// required; another nil function field means "nothing to do" (see each).
type API struct {
	Store  *store.Store
	Hub    *events.Hub
	Config func() *config.Config // the current config
	Now    func() time.Time
	Log    *slog.Logger
	// Exposed refuses an agent this client may not use (apiExposed: false
	// outside the window); nil allows every agent.
	Exposed func(config.Agent) error
	// Running says whether a turn is running in a session: clear and delete
	// refuse then (409 turn_in_progress).
	Running func(sessionID string) bool
	// Forget drops what runtimes keep of a session that was cleared or
	// deleted (an ACP agent's process).
	Forget func(sessionID string)
	// ContextInfo is a session's context use for GET /v1/sessions/{id}
	// (nil: none).
	ContextInfo func(ctx context.Context, sess store.Session) *api.ContextInfo
	// AgentInfo describes an agent for GET /v1/agents (its runtime says its
	// status). Required.
	AgentInfo func(config.Agent) api.AgentInfo
	// Warning is why the config file was last not reloaded ("" when it was).
	Warning func() string
	// Pending is the config file content waiting for approval (nil: none).
	Pending func() *api.PendingConfig
}

// Summary is a stored session as the API shows it.
func Summary(s store.Session) api.SessionSummary {
	out := api.SessionSummary{SessionID: s.ID, AgentID: s.AgentID, Name: s.Name, PinnedAt: s.PinnedAt,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, LastSnippet: s.LastSnippet}
	if s.Attributes != "" && s.Attributes != "{}" {
		out.Attributes = json.RawMessage(s.Attributes)
	}
	return out
}

func (a *API) maxBody() int64 { return a.Config().MaxBodyBytes }

func (a *API) exposed(ag config.Agent) error {
	if a.Exposed == nil {
		return nil
	}
	return a.Exposed(ag)
}

// exposedSession is exposed for the agent a stored session belongs to (an
// agent no longer configured is the turn's own error).
func (a *API) exposedSession(agentID string) error {
	if ag, ok := a.Config().Agent(agentID); ok {
		return a.exposed(ag)
	}
	return nil
}

// publish sends a session event; a failure is logged (the change is stored).
func (a *API) publish(sessionID string, ev api.SessionEvent) {
	if err := a.Hub.Publish(context.Background(), sessionID, api.EventSession, ev); err != nil {
		a.Log.Error("publish event", "session", sessionID, "type", api.EventSession, "err", err)
	}
}
