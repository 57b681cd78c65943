// Package roundtablert is the round-table runtime (docs/protocols/roundtable-agents.md):
// the registration API of round-table agents (/api/v1/agents, registry.go),
// round tables started by the API (/v1/roundtables), by a chat agent's
// round_table tool (RunTool) and by agents of type "roundtable" (Run)
// (api.go), the one path all three take (run.go: participants, keys, the
// engine of package roundtable with progress on the session's stream, the
// result stored with its event) and the model-written synthesis (synth.go).
// It gets a turn.Env and what New's Options name, never the service.
package roundtablert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/redact"
	"jarvis/service/roundtable"
	"jarvis/service/turn"
)

// Options is what the runtime needs from the service beyond its turn.Env.
type Options struct {
	Red *redact.Set // what agents' answers and errors may echo (their keys)
	// PutSecret stores an agent's API key and says where it went
	// (secrets.InKeyring, secrets.InFile, or "" when the store does not say).
	PutSecret func(ref, value string) (where string, err error)
	// DeleteSecret removes a key; nil when the secret store cannot.
	DeleteSecret func(ref string) error
	// ProviderFor is a chat agent's model provider and model (the LLM
	// synthesis uses the default chat agent's); nil: the engine's
	// deterministic synthesis.
	ProviderFor func(config.Agent) (llm.Provider, string, error)
	// DefaultAgent is the id of the agent a new session gets by default.
	DefaultAgent func() string
	// Client calls the agents; nil: roundtable.NewSafeClient (link-local
	// and metadata dials refused, no redirects).
	Client *http.Client
}

// Runtime runs round tables and holds their state.
type Runtime struct {
	env    turn.Env
	opts   Options
	red    *redact.Set
	client *http.Client
	conf   turn.Settings[rtAgentConfig] // agents' "roundtable" objects, parsed once

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // run id → cancel (API runs)
	closing chan struct{}
	wg      sync.WaitGroup // API runs in the background
}

// errCancelled is the cause of an API run cancelled by its caller.
var errCancelled = errors.New("cancelled by the user")

// New returns the round-table runtime and records as interrupted the runs a
// previous process left running.
func New(ctx context.Context, env turn.Env, opts Options) *Runtime {
	if opts.Red == nil {
		opts.Red = &redact.Set{}
	}
	if opts.Client == nil {
		opts.Client = roundtable.NewSafeClient()
	}
	if opts.DefaultAgent == nil {
		opts.DefaultAgent = func() string { return "general" }
	}
	rt := &Runtime{env: env, opts: opts, red: opts.Red, client: opts.Client, running: map[string]context.CancelCauseFunc{}, closing: make(chan struct{}),
		conf: turn.Settings[rtAgentConfig]{Raw: func(a config.Agent) json.RawMessage { return a.Roundtable }, Parse: parseRTAgentConfig}}
	if n, err := env.Store.InterruptRoundtableRuns(ctx); err != nil {
		env.Log.Error("mark interrupted round tables", "err", err)
	} else if n > 0 {
		env.Log.Warn("round tables interrupted by a restart", "count", n)
	}
	return rt
}

// Close interrupts the API runs still going (each is stored as
// interrupted) and waits for them; new ones are refused.
func (rt *Runtime) Close() {
	rt.mu.Lock()
	select {
	case <-rt.closing:
	default:
		close(rt.closing)
	}
	rt.mu.Unlock()
	rt.wg.Wait()
}

// Load parses an agent's "roundtable" settings when a configuration is
// loaded, and logs what cannot run.
func (rt *Runtime) Load(a config.Agent) {
	if _, err := rt.conf.Get(a); err != nil {
		rt.env.Log.Warn("round-table agent cannot run", "agent", a.AgentID, "err", err)
	}
}

// Validate says why an agent cannot run, or nil.
func (rt *Runtime) Validate(a config.Agent) error { return turn.Unconfigured(rt.Status(a)) }

// Outbound: a round table sends the message to every registered expert agent.
func (rt *Runtime) Outbound(_ *config.Config, a config.Agent) string {
	return fmt.Sprintf("round-table agent %q (its registered expert agents)", a.AgentID)
}

// Routes are the registration API and the round-table runs.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "POST /api/v1/agents", Handle: rt.handleRTAgentCreate},
		{Pattern: "GET /api/v1/agents", Handle: rt.handleRTAgentList},
		{Pattern: "GET /api/v1/agents/{name}", Handle: rt.handleRTAgentGet},
		{Pattern: "PUT /api/v1/agents/{name}", Handle: rt.handleRTAgentPut},
		{Pattern: "PATCH /api/v1/agents/{name}", Handle: rt.handleRTAgentPatch},
		{Pattern: "DELETE /api/v1/agents/{name}", Handle: rt.handleRTAgentDelete},
		{Pattern: "POST /v1/roundtables", Handle: rt.handleRTStart},
		{Pattern: "GET /v1/roundtables", Handle: rt.handleRTList},
		{Pattern: "GET /v1/roundtables/{id}", Handle: rt.handleRTGet},
		{Pattern: "POST /v1/roundtables/{id}/cancel", Handle: rt.handleRTCancel},
	}
}
