package service

import (
	"jarvis/service/a2aserver"
	"net/http"

	"jarvis/service/httpapi"
	"jarvis/service/turn"
)

// routes is the one route table of the service.
func (s *Service) routes() http.Handler {
	adapt := func(h httpapi.HandlerFunc) http.Handler { return httpapi.Adapt(s.log, h) }
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	sessions, providers := s.sessionsAPI(), s.providersAPI() // service/sessionsapi, service/providersapi
	mux.Handle("GET /health", adapt(s.handleHealth))
	mux.Handle("POST /v1/sessions", adapt(sessions.Create))
	mux.Handle("POST /v1/chat", adapt(s.handleChat))
	mux.Handle("POST /v1/chat/cancel", adapt(s.handleCancel))
	mux.Handle("GET /v1/stream", adapt(s.handleStream))
	mux.Handle("POST /v1/tools/result", adapt(s.handleToolResult))
	mux.Handle("GET /v1/agents", adapt(sessions.Agents))
	mux.Handle("GET /v1/providers", adapt(providers.List))
	mux.Handle("PUT /v1/providers", adapt(providers.Set))
	mux.Handle("PUT /v1/memory/embeddings", adapt(providers.SetEmbedding)) // the model memory finds notes by meaning with
	mux.Handle("POST /v1/config/approve", adapt(s.handleApproveConfig))
	mux.Handle("POST /v1/providers/test", adapt(providers.Test))
	mux.Handle("POST /v1/agents/{agentId}/session", adapt(s.handleAgentSession))
	mux.Handle("GET /v1/sessions", adapt(sessions.List))
	mux.Handle("GET /v1/sessions/search", adapt(sessions.Search))
	mux.Handle("GET /v1/sessions/{id}", adapt(sessions.Get))
	mux.Handle("GET /v1/sessions/{id}/messages", adapt(sessions.Messages))
	mux.Handle("PATCH /v1/sessions/{id}", adapt(sessions.Update))
	mux.Handle("POST /v1/sessions/{id}/clear", adapt(sessions.Clear))
	mux.Handle("POST /v1/sessions/{id}/versions", adapt(sessions.ShowVersion))
	mux.Handle("DELETE /v1/sessions/{id}", adapt(sessions.Delete))
	mux.Handle("POST /api/plugins/sessions/operations/create", adapt(sessions.Operations))
	for _, r := range s.tasksAPI().Routes() { // tasks and the Inbox (service/tasks, background.go)
		mux.Handle(r.Pattern, adapt(r.Handle))
	}
	a2a := s.a2aServer() // Agent2Agent: the card (public, for discovery) and JSON-RPC behind the token
	mux.Handle("GET "+a2aserver.CardPath, http.HandlerFunc(a2a.ServeCard))
	mux.Handle("POST "+a2aserver.RPCPath, http.HandlerFunc(a2a.ServeRPC))
	// The runtimes add their routes: the chat runtime compaction, memory
	// and the tool catalogue (service/chatrt), round tables theirs
	// (docs/protocols/roundtable-agents.md, service/roundtablert).
	for _, rt := range s.runtimes.All() { // the runtimes' own routes
		if ra, ok := rt.(turn.RouteAdder); ok {
			for _, r := range ra.Routes() {
				mux.Handle(r.Pattern, adapt(r.Handle))
			}
		}
	}
	s.patterns = mux.patterns
	mux.ServeMux.Handle("/", adapt(func(w http.ResponseWriter, r *http.Request) error {
		return httpapi.NotFoundRoute(r)
	}))
	g := &httpapi.Guard{Token: s.token, AllowNonLoopbackHost: s.allowNonLoopbackHost, AllowedOrigins: s.allowedOrigins,
		Seen: s.base.Note} // the default base of callback URLs
	return g.Wrap(mux)
}

// recordingMux remembers the patterns of the route table, so tests (the
// security suite) can check every route.
type recordingMux struct {
	*http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Routes returns the route table's patterns ("METHOD /path/{var}").
func (s *Service) Routes() []string { return append([]string(nil), s.patterns...) }
