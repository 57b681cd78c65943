// Package chatrt is the chat runtime: the agent loop of chat agents on
// OpenAI-compatible providers (loop.go: a model step, its tool calls through
// the desktop or run here, repeat), their context budget and compaction
// (budget.go, context.go), delegation with agents_message (delegate.go), the
// memory tools and routes (memory.go), the tools the service runs itself
// and the desktop's tool catalogue (tools.go, catalog.go), and the system
// prompts of chat and CLI runs (prompt.go). It gets a turn.Env and what
// New's Options name, never the service.
package chatrt

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"jarvis/api"
	"jarvis/memory"
	"jarvis/service/catalog"
	"jarvis/service/config"
	"jarvis/service/injection"
	"jarvis/service/llm"
	"jarvis/service/prompt"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
)

// Options is what the runtime needs from the service beyond its turn.Env.
type Options struct {
	// Waiter pauses a turn on its tool calls until the desktop answers.
	Waiter *toolwait.Waiter
	// ProviderFor is a chat agent's model provider and model, or an
	// *llm.Error with llm.CodeNotConfigured that says how to configure one.
	ProviderFor func(config.Agent) (llm.Provider, string, error)
	// Memory is the Markdown memory workspace (memory tools, prompt section); nil: none.
	Memory *memory.Store
	// Catalog is the tools the desktop announces (its MCP servers' tools).
	Catalog *catalog.Catalog
	// Runtimes is the registry: delegation asks the target's runtime
	// whether a message leaves the process and when its reply comes.
	Runtimes *turn.Registry
	// StartTurn records a message and starts its agent's turn in the
	// background (chain: the delegation chain that led to it; untrusted:
	// the untrusted sources the message carries, those of the turn that
	// wrote it, service/provenance); it returns the turn and the seq of its
	// user.message event.
	StartTurn func(ctx context.Context, sess store.Session, text string, chain []string, untrusted []api.Source) (*turn.Turn, int64, error)
	// Running is the session's running turn, or nil.
	Running func(sessionID string) *turn.Turn
	// Claim holds a session for t as a turn does (an error when it is
	// busy); Release ends that hold.
	Claim   func(t *turn.Turn) error
	Release func(t *turn.Turn)
	// LiveSession is a session that exists and is not deleted, or the API
	// error that says so (field names the request's field).
	LiveSession func(ctx context.Context, id, field string) (store.Session, error)
}

// Runtime runs chat agents' turns and holds the service tools.
type Runtime struct {
	env  turn.Env
	opts Options
	det  *injection.Detector

	tools       []scopedSpec          // every OS tool as offered to models
	serverTools map[string]ServerTool // tools the service runs itself
	skills      prompt.SkillCache     // <data-dir>/skills/*/SKILL.md
	agentSessMu sync.Mutex            // serializes default routing's find-or-create

	// windows caches context windows servers report, by windowKey (budget.go).
	windows sync.Map
	// memoryPrompt returns the memory section of chat system prompts (after
	// skills, before agents), of at most maxBytes of notes; nil: none.
	memoryPrompt func(maxBytes int) string
	memSection   struct { // the last memory prompt section (memorySectionText)
		sync.Mutex
		text, section string
	}
}

// New returns the chat runtime with its own service tools (memory,
// agents_message) registered.
func New(env turn.Env, opts Options) *Runtime {
	if opts.Catalog == nil {
		opts.Catalog = catalog.New()
	}
	rt := &Runtime{env: env, opts: opts, det: injection.New(), tools: offeredTools(), serverTools: map[string]ServerTool{}}
	rt.skills.Dir = filepath.Join(env.DataDir, "skills")
	if opts.Memory != nil {
		rt.registerMemoryTools()
		// MEMORY.md and today's and yesterday's notes go into chat prompts, capped.
		rt.memoryPrompt = rt.memorySectionText
	}
	rt.registerDelegation()
	return rt
}

func (rt *Runtime) publish(sessionID, typ string, data any) {
	rt.env.Publisher.Publish(sessionID, typ, data)
}

// AwaitsStart: Run waits for the turn's start to be stored itself, once
// its model call has begun (turn.StartAwaiter).
func (rt *Runtime) AwaitsStart() {}

// Status is a chat agent's status: unconfigured (saying how to configure
// it) when it has no usable model provider.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	if _, _, err := rt.opts.ProviderFor(a); err != nil {
		var le *llm.Error
		if errors.As(err, &le) && le.Code == llm.CodeNotConfigured {
			return api.AgentStatus{State: "unconfigured", Detail: le.Message}
		}
		return api.AgentStatus{State: "unknown"}
	}
	return api.AgentStatus{State: "ok"}
}

// Validate is the agent's status when it says the agent is not configured.
func (rt *Runtime) Validate(a config.Agent) error { return turn.Unconfigured(rt.Status(a)) }

// Describe adds the agent's provider and model.
func (rt *Runtime) Describe(a config.Agent, info *api.AgentInfo) {
	turn.DescribeModel(rt.env.Config(), a, info)
}

// ConfigChanged forgets the windows servers reported: they are asked again
// (one may have been reloaded too).
func (rt *Runtime) ConfigChanged() { rt.windows.Clear() }

// Routes are compaction, memory and the tool catalogue.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "PUT /v1/tools/catalog", Handle: rt.handlePutToolCatalog},
		{Pattern: "GET /v1/tools/catalog", Handle: rt.handleGetToolCatalog},
		{Pattern: "POST /v1/sessions/{id}/compact", Handle: rt.handleCompact},
		{Pattern: "GET /v1/sessions/{id}/compactions", Handle: rt.handleCompactions},
		{Pattern: "POST /v1/sessions/{id}/sample", Handle: rt.handleSample}, // an MCP server's sampling (sample.go)
		{Pattern: "POST /v1/memory/write", Handle: rt.handleMemoryWrite},
		{Pattern: "GET /v1/memory/search", Handle: rt.handleMemorySearch},
		{Pattern: "GET /v1/memory/get", Handle: rt.handleMemoryGet},
		{Pattern: "GET /v1/memory/embeddings", Handle: rt.handleMemoryEmbeddings},
		{Pattern: "POST /v1/memory/embeddings", Handle: rt.handleMemoryEmbeddings},
	}
}
