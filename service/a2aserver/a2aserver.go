// Package a2aserver offers Jarvis's agents over the Agent2Agent protocol
// (A2A v0.3, github.com/a2aproject/a2a-go) on the loopback service: an
// agent card at /.well-known/agent-card.json that lists every agent open to
// API clients (apiExposed) as a skill, with the service's bearer token as
// its one security scheme, and the JSON-RPC endpoint (POST /v1/a2a, behind
// the token) with message/send, message/stream, tasks/get, tasks/cancel and
// tasks/resubscribe. A message runs one turn of the chosen agent in a Jarvis
// session (one per A2A context), through the service's own turn lifecycle:
// its tools still go to the desktop's gate, as any turn's do. The reply
// streams as one artifact, appended to delta by delta, and ends the task
// completed; a failed turn ends it failed with the turn's error in words.
// It gets the service's turns as the functions of Turns, never the service.
package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"jarvis/service/httpapi"
)

// CardPath is where A2A clients look for the agent card.
const CardPath = "/.well-known/agent-card.json"

// RPCPath is the JSON-RPC endpoint the card names.
const RPCPath = "/v1/a2a"

// SkillKey is the message metadata key that names the skill (the Jarvis
// agent id) a message is for; without it a card of one skill uses that one.
const SkillKey = "skill"

// Agent is one agent offered as a skill.
type Agent struct {
	ID, Name, Description string
}

// Turns is what the server needs of the service.
type Turns struct {
	// Agents are the agents open to API clients, in the config's order.
	Agents func() []Agent
	// Run runs one turn of agentID with text in the Jarvis session of the
	// A2A context contextID (a new session for a new context), calling
	// onDelta with each piece of the reply as it comes; it returns the
	// reply, or the turn's error in words. Cancelling ctx cancels the turn.
	Run func(ctx context.Context, agentID, contextID, text string, onDelta func(string)) (string, error)
}

// Server serves the card and the JSON-RPC endpoint.
type Server struct {
	turns   Turns
	version string
	maxBody func() int64
	rpc     http.Handler
}

// New returns the server; version is Jarvis's, for the card; maxBody caps
// a JSON-RPC request's body (the service's maxBodyBytes).
func New(turns Turns, version string, maxBody func() int64, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{turns: turns, version: version, maxBody: maxBody}
	s.rpc = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(&executor{turns: turns}, a2asrv.WithLogger(log)))
	return s
}

// Card is the agent card for a service reached at base (scheme://host:port).
func (s *Server) Card(base string) *a2a.AgentCard {
	card := &a2a.AgentCard{
		Name:               "Jarvis",
		Description:        "The agents of this Jarvis service, one skill each. Name the skill in the message's metadata (\"skill\": the agent id).",
		URL:                strings.TrimSuffix(base, "/") + RPCPath,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            s.version,
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer",
			Description: "the service's token (JARVIS_TOKEN of the headless service)"}},
		Security: []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}},
		Skills:   []a2a.AgentSkill{},
	}
	for _, a := range s.turns.Agents() {
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: a.ID, Name: a.Name, Description: a.Description, Tags: []string{"jarvis-agent"}})
	}
	return card
}

// ServeCard is GET /.well-known/agent-card.json. The card's URL is built
// from the request's Host, which the service's guard has checked is a
// loopback address of this service.
func (s *Server) ServeCard(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(s.Card("http://" + r.Host))
	if err != nil {
		http.Error(w, "the agent card could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// ServeRPC is POST /v1/a2a (a2a-go's JSON-RPC handler), its body capped
// as every route's is: a larger one gets 413 in the service's error
// envelope before a2a-go reads it.
func (s *Server) ServeRPC(w http.ResponseWriter, r *http.Request) {
	limit := s.maxBody()
	if r.ContentLength > limit {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than %d bytes", limit).With("limit_bytes", limit))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	s.rpc.ServeHTTP(w, r)
}

// executor runs a task: one turn of the skill's agent.
type executor struct{ turns Turns }

func (e *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	fail := func(format string, args ...any) error {
		ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateFailed, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: fmt.Sprintf(format, args...)}))
		ev.Final = true
		return q.Write(ctx, ev)
	}
	agent, err := e.skill(rc)
	if err != nil {
		return fail("%v", err)
	}
	var text strings.Builder
	for _, p := range rc.Message.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			text.WriteString(p.Text)
		case *a2a.TextPart:
			text.WriteString(p.Text)
		default:
			return fail("only text parts are supported; the message has a %T", p)
		}
	}
	if strings.TrimSpace(text.String()) == "" {
		return fail("the message has no text")
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	var artifact a2a.ArtifactID
	reply, err := e.turns.Run(ctx, agent, rc.ContextID, text.String(), func(delta string) {
		var ev *a2a.TaskArtifactUpdateEvent
		if artifact == "" {
			ev = a2a.NewArtifactEvent(rc, a2a.TextPart{Text: delta})
			artifact = ev.Artifact.ID
		} else {
			ev = a2a.NewArtifactUpdateEvent(rc, artifact, a2a.TextPart{Text: delta})
		}
		_ = q.Write(ctx, ev)
	})
	if ctx.Err() != nil {
		return nil // cancelled: Cancel wrote the final state
	}
	if err != nil {
		return fail("%v", err)
	}
	if artifact == "" && reply != "" { // a reply that did not stream
		if err := q.Write(ctx, a2a.NewArtifactEvent(rc, a2a.TextPart{Text: reply})); err != nil {
			return err
		}
	}
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCompleted, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: reply}))
	ev.Final = true
	return q.Write(ctx, ev)
}

// skill is the agent a message is for: the one its metadata names, or the
// only one offered.
func (e *executor) skill(rc *a2asrv.RequestContext) (string, error) {
	agents := e.turns.Agents()
	var want string
	for _, meta := range []map[string]any{rc.Message.Metadata, rc.Metadata} {
		if s, ok := meta[SkillKey].(string); ok && s != "" {
			want = s
			break
		}
	}
	if want == "" && rc.StoredTask != nil {
		if s, ok := rc.StoredTask.Metadata[SkillKey].(string); ok {
			want = s
		}
	}
	if want == "" {
		if len(agents) == 1 {
			return agents[0].ID, nil
		}
		ids := make([]string, 0, len(agents))
		for _, a := range agents {
			ids = append(ids, a.ID)
		}
		return "", fmt.Errorf("say which skill the message is for (metadata %q: one of %s)", SkillKey, strings.Join(ids, ", "))
	}
	for _, a := range agents {
		if a.ID == want {
			return a.ID, nil
		}
	}
	return "", fmt.Errorf("no skill %q: this service offers no such agent over A2A", want)
}

func (e *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}
