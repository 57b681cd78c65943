// Package service is the General Agent Service of docs/protocols/service-api.md: the HTTP + SSE
// API on loopback, sessions and streaming turns. It composes; the agents run
// in runtime packages (service/chatrt, acprt, clirt, externalrt, proxyrt,
// roundtablert), each given a turn.Env and its Options, never the service.
//
// Layout: http.go is the route table (guards, the error envelope and the SSE
// writer are package httpapi's; the runtimes add their own routes; the session
// and setup routes are packages sessionsapi and providersapi, given their
// dependencies in apis.go); chat.go holds the chat, cancel, tool-result and
// stream handlers; turn.go is the turn lifecycle, which runs a turn on the
// runtime the registry (runtimes.go) gives for its agent. Everything a turn does is published through the event hub
// (package events) and stored (package store) before any client sees it.
//
// Concurrency: a Service is safe for concurrent use. Each session runs at
// most one turn at a time, in its own goroutine, detached from the request
// that started it: a client that disconnects does not stop the turn.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/api"
	"jarvis/internal/approved"
	"jarvis/internal/fsperm"
	"jarvis/memory"
	"jarvis/service/a2art"
	"jarvis/service/acprt"
	"jarvis/service/callback"
	"jarvis/service/catalog"
	"jarvis/service/chatrt"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/externalrt"
	"jarvis/service/httpapi"
	"jarvis/service/idempotency"
	"jarvis/service/llm"
	"jarvis/service/proxyrt"
	"jarvis/service/redact"
	"jarvis/service/roundtablert"
	"jarvis/service/store"
	"jarvis/service/tasks"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/tools"
)

// Version is the service version reported by /health.
const Version = "0.1.0"

// Secrets resolves secret references named in the configuration.
type Secrets interface {
	Get(ref string) (string, error)
}

// Options configures New.
type Options struct {
	DataDir string         // holds jarvis.db (required)
	Config  *config.Config // default config.Defaults()
	Token   string         // bearer token (required)
	Logger  *slog.Logger
	Now     func() time.Time
	// HTTPClient is used for calls to model servers; default has no overall
	// timeout (streams are long) but each model call is bounded by the
	// configured upstream timeout.
	HTTPClient *http.Client
	Secrets    Secrets
	// HeartbeatEvery is the idle interval after which streams get a
	// ": heartbeat" comment. Default 15 s.
	HeartbeatEvery time.Duration
	// AllowedOrigins are extra browser origins allowed to call the API.
	AllowedOrigins []string
	// AllowNonLoopbackHost disables the Host check (only with --allow-non-loopback).
	AllowNonLoopbackHost bool
	// ConfigPath is the config file the setup API (PUT /v1/providers)
	// updates; empty means changes stay in memory.
	ConfigPath string
	// Approved keeps the config file's approved content
	// (config_approval.go): a reload applies only approved content, and the
	// setup API approves what it writes. Nil applies every valid content.
	Approved *approved.Store
	// ConfigWarning is LoadConfig's warning about the config given (a file
	// not approved), shown until a reload succeeds.
	ConfigWarning string
	// Window: this is the desktop window's in-process service, whose
	// per-launch token only the window holds, so agents configured with
	// apiExposed: false may be used (exposure.go).
	Window bool
	// RunTasks runs the scheduled tasks in this process (the desktop's
	// service); the API serves them either way (background.go).
	RunTasks bool
	// TasksFile is tasks.json; "" none.
	TasksFile string
	// TaskOwner names this process in the runs it claims.
	TaskOwner string
	// TaskLookEvery is the longest wait between two looks at the clock
	// for due tasks (default 30 s).
	TaskLookEvery time.Duration
	// MCPBridge is the argv of the stdio MCP bridge (acprt.BridgeHelper)
	// for ACP agents that take MCP servers only over stdio; nil: none.
	MCPBridge []string
	// Sandbox is Jarvis's sandbox (tools.NewSandbox: the confinement
	// helper, bubblewrap, the protected folders) of the coding-agent CLIs
	// whose own sandbox does not apply (cliagent.OwnSandbox); DataDir and
	// the config file's folder are added to its protected folders. Nil:
	// they run unconfined, and their status says so.
	Sandbox *tools.Sandbox
}

// Service is the General Agent Service.
type Service struct {
	log     *slog.Logger
	now     func() time.Time
	started time.Time
	token   string
	window  bool        // Options.Window
	red     *redact.Set // secret values removed from all output (redact.go)
	hc      *http.Client
	models  *http.Client // hc with a pool sized for model calls (llm.PooledClient)
	secrets Secrets
	// rawSecrets is the secret store as given, for what it says besides values
	// (where a key was found or went, its fallback file); every value goes
	// through secrets, which records it for the redactor.
	rawSecrets Secrets
	hbEvery    time.Duration

	allowedOrigins       map[string]bool
	allowNonLoopbackHost bool

	// confWarning is why the config file was last not reloaded (config_reload.go).
	confWarning atomic.Pointer[string]
	approved    *approved.Store                   // Options.Approved
	pendingConf atomic.Pointer[api.PendingConfig] // the config content waiting for approval (config_approval.go)

	conf       atomic.Pointer[config.Config]
	configPath string
	// sandbox is Options.Sandbox with the service's folders protected.
	sandbox   *tools.Sandbox
	st        *store.Store
	hub       *events.Hub
	acp       *acprt.Runtime // ACP agents' processes, by session
	mcpBridge []string       // Options.MCPBridge, for acp
	mem       *memory.Store  // the Markdown memory workspace (<data-dir>/memory)

	chat     *chatrt.Runtime       // chat agents, their service tools and context (service/chatrt)
	a2aCtx   a2aContexts           // A2A contexts and their sessions (a2a.go)
	catalog  *catalog.Catalog      // tools the desktop announces
	ext      *externalrt.Runtime   // external agents (its rejected-callback counts are flushed on Close)
	a2a      *a2art.Runtime        // A2A agents (FollowLate runs while the service does)
	rtr      *roundtablert.Runtime // round tables (service/roundtablert)
	replays  idempotency.Replays   // Idempotency-Keys of chat messages and tool results (service/idempotency)
	runtimes turn.Registry         // agent type → runtime (runtimes.go)
	base     callback.Base         // the service's own URL, for callback URLs
	handler  http.Handler
	patterns []string // the route table, for Routes

	mu    sync.Mutex
	turns map[string]*turn.Turn // session id → running turn
	// waiter pauses turns on tool calls until the desktop posts their results.
	waiter *toolwait.Waiter

	closing chan struct{}
	wg      sync.WaitGroup

	// The scheduler of tasks, when this process runs them (background.go).
	sched     *tasks.Scheduler
	stopSched context.CancelFunc
	schedDone chan struct{}

	dataDir string
}

// New opens the store, marks turns that a previous process left running as
// interrupted, and returns a ready service.
func New(ctx context.Context, opts Options) (*Service, error) {
	if opts.DataDir == "" {
		return nil, errors.New("service: DataDir is required")
	}
	if opts.Token == "" {
		return nil, errors.New("service: Token is required")
	}
	if opts.Config == nil {
		opts.Config = config.Defaults()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.HeartbeatEvery <= 0 {
		opts.HeartbeatEvery = 15 * time.Second
	}
	// The data dir is 0700 and its databases 0600 (created so, repaired
	// when found otherwise, refused when another user owns them); the
	// files are repaired again once open, since SQLite may have created
	// companion files, or the memory index rebuilt its file, meanwhile.
	dbPath, indexPath := filepath.Join(opts.DataDir, "jarvis.db"), filepath.Join(opts.DataDir, "memory-index.db")
	privateFiles := func() error {
		return errors.Join(fsperm.File(dbPath, true), fsperm.File(indexPath, true))
	}
	if err := fsperm.Dir(opts.DataDir); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if err := privateFiles(); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	st, err := store.Open(ctx, dbPath, store.Options{Now: opts.Now, Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	// One redactor for everything the service shows, stores, logs or sends
	// on: it learns every secret value read from the secret store
	// (service/redact).
	red := &redact.Set{}
	red.Add(opts.Token)
	opts.Logger = slog.New(redact.Handler(opts.Logger.Handler(), red))
	s := &Service{
		red: red, log: opts.Logger, now: opts.Now, started: opts.Now(), token: opts.Token, window: opts.Window, hc: opts.HTTPClient, models: llm.PooledClient(opts.HTTPClient),
		secrets: recordSecrets(opts.Secrets, red), rawSecrets: opts.Secrets, hbEvery: opts.HeartbeatEvery,
		allowedOrigins: map[string]bool{}, allowNonLoopbackHost: opts.AllowNonLoopbackHost,
		st: st, catalog: catalog.New(), turns: map[string]*turn.Turn{}, closing: make(chan struct{}),
	}
	for _, o := range opts.AllowedOrigins {
		s.allowedOrigins[o] = true
	}
	s.conf.Store(opts.Config)
	s.configPath = opts.ConfigPath
	s.approved = opts.Approved
	if opts.ConfigWarning != "" {
		s.confWarning.Store(&opts.ConfigWarning)
		if b, err := os.ReadFile(s.configPath); err == nil && s.approved != nil {
			s.markPending(s.configPath, b)
		}
	}
	mem, err := memory.Open(ctx, memory.Options{Root: opts.DataDir, IndexPath: indexPath, Logger: opts.Logger, Now: opts.Now, Embedder: chatrt.Embedder(opts.Config, s.secrets, s.models, opts.Logger)})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("service: memory: %w", err)
	}
	if err := privateFiles(); err != nil {
		mem.Close()
		st.Close()
		return nil, fmt.Errorf("service: %w", err)
	}
	s.mem = mem
	s.dataDir = opts.DataDir
	s.mcpBridge = opts.MCPBridge
	if opts.Sandbox != nil {
		sb := *opts.Sandbox
		sb.Protected = append(append([]string(nil), sb.Protected...), absPath(opts.DataDir))
		if opts.ConfigPath != "" {
			sb.Protected = append(sb.Protected, filepath.Dir(absPath(opts.ConfigPath)))
		}
		s.sandbox = &sb
	}
	s.hub = events.New(st, events.Options{Logger: opts.Logger, Now: opts.Now, Redact: red.Bytes})
	s.registerRuntimes(ctx)
	if err := s.recoverInterrupted(ctx); err != nil {
		s.hub.Close()
		mem.Close()
		st.Close()
		return nil, err
	}
	px, err := proxyrt.New(ctx, s.runtimeEnv(), &s.base, red)
	if err != nil {
		s.hub.Close()
		mem.Close()
		st.Close()
		return nil, err
	}
	s.runtimes.Register(config.TypeProxy, px)
	s.parseSettings(opts.Config)
	s.handler = s.routes()
	if err := s.startTasks(ctx, opts); err != nil {
		s.hub.Close()
		mem.Close()
		st.Close()
		return nil, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.ext.FlushRejectsEvery(s.closing) // counts of rejected external callbacks
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.a2a.FollowLate(s.closing) // A2A answers that come after their turn, across restarts
	}()
	return s, nil
}

// Handler returns the service's HTTP handler (all routes, behind the guards).
func (s *Service) Handler() http.Handler { return s.handler }

// Store exposes the database to in-module tests and tools (integrity checks).
func (s *Service) Store() *store.Store { return s.st }

func (s *Service) cfg() *config.Config { return s.conf.Load() }

// SetConfig replaces the configuration; running turns keep the one they started with.
func (s *Service) SetConfig(c *config.Config) {
	s.parseSettings(c)
	old := s.conf.Swap(c)
	s.chat.ConfigChanged() // servers are asked for their windows again (one may have been reloaded too)
	s.applyEmbedding(old, c)
}

// applyEmbedding gives memory the embedding model of c when it differs from
// old's (the window's "Use … for memory", or an edit of the config file):
// the vectors are made again in the background while keyword search
// answers.
func (s *Service) applyEmbedding(old, c *config.Config) {
	type where struct{ base, model, ref string }
	var was, now where
	var ok bool
	if old != nil {
		was.base, was.model, was.ref, _ = old.ResolvedEmbedding()
	}
	if now.base, now.model, now.ref, ok = c.ResolvedEmbedding(); !ok {
		now = where{}
	}
	if was == now || s.mem == nil {
		return
	}
	if err := s.mem.SetEmbedder(chatrt.Embedder(c, s.secrets, s.models, s.log)); err != nil {
		s.log.Warn("memory embedding model not changed", "err", err)
	}
}

// Close stops running turns (they are recorded as interrupted), flushes
// events and closes the store.
func (s *Service) Close() error {
	select {
	case <-s.closing:
		return nil
	default:
	}
	close(s.closing)
	s.stopTasks() // no new runs
	s.mu.Lock()
	for _, t := range s.turns {
		t.Cancel(errShutdown)
	}
	s.mu.Unlock()
	if s.sched != nil {
		s.sched.Wait() // the runs record their end
	}
	s.rtr.Close() // round tables started by the API are stored as interrupted
	s.wg.Wait()
	s.acp.Close()
	s.ext.FlushRejects(true)
	s.hub.Close()
	return errors.Join(s.mem.Close(), s.st.Close())
}

var errShutdown = turn.ErrShutdown

// recoverInterrupted tells the streams of turns a dead process left running
// that they were interrupted.
func (s *Service) recoverInterrupted(ctx context.Context) error {
	turns, err := s.st.InterruptRunning(ctx)
	if err != nil {
		return fmt.Errorf("service: recovering turns: %w", err)
	}
	for _, t := range turns {
		s.log.Warn("turn interrupted by a restart", "session", t.SessionID, "turn", t.ID)
		if _, err := s.hub.PublishWait(ctx, t.SessionID, api.EventError, api.ErrorEvent{Code: "interrupted",
			Message: store.InterruptedMessage, TurnID: t.ID}); err != nil {
			return err
		}
	}
	return nil
}

func newID(prefix string) string { return turn.NewID(prefix) }

func (s *Service) handleHealth(w http.ResponseWriter, r *http.Request) error {
	return httpapi.WriteJSON(w, http.StatusOK, api.Health{Healthy: true, Version: Version, UptimeMs: s.now().Sub(s.started).Milliseconds()})
}

// providerFor returns the model provider of a chat agent, or an *llm.Error
// with CodeNotConfigured that says how to configure one.
func (s *Service) providerFor(a config.Agent) (llm.Provider, string, error) {
	c := s.cfg()
	ch := c.ResolvedChat(a)
	switch ch.Provider {
	case config.ProviderOpenAI, config.ProviderOpenAICompatible:
	default:
		return nil, "", &llm.Error{Code: llm.CodeNotConfigured, Message: fmt.Sprintf("agent %q uses provider %q, which this service cannot run yet", a.AgentID, ch.Provider)}
	}
	key := ""
	if ch.APIKeyRef != "" && s.secrets != nil {
		v, err := s.secrets.Get(ch.APIKeyRef)
		if err == nil {
			key = v
		} else if ch.Provider == config.ProviderOpenAI {
			return nil, "", &llm.Error{Code: llm.CodeNotConfigured, Message: "No model provider is configured: " + err.Error() +
				". Store an OpenAI API key in the OS keyring (the desktop's setup panel does this), set JARVIS_SECRET_OPENAI, " +
				"or point the agent at a local OpenAI-compatible server (Ollama, LM Studio, llama.cpp) with \"providers\": {\"openai-compatible\": {\"baseUrl\": \"http://127.0.0.1:11434/v1\", \"model\": \"llama3.2\"}} and \"defaultProvider\": \"openai-compatible\" in config.json."}
		}
	}
	if ch.Provider == config.ProviderOpenAICompatible && ch.BaseURL == "" {
		return nil, "", &llm.Error{Code: llm.CodeNotConfigured, Message: fmt.Sprintf("agent %q uses an OpenAI-compatible server but no baseUrl is configured (providers.openai-compatible.baseUrl in config.json)", a.AgentID)}
	}
	if ch.Model == "" {
		return nil, "", &llm.Error{Code: llm.CodeNotConfigured, Message: fmt.Sprintf("agent %q has no model configured (chat.model or providers.%s.model in config.json)", a.AgentID, ch.Provider)}
	}
	return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: ch.BaseURL, APIKey: key, HTTPClient: s.models}), ch.Model, nil
}

// absPath is p made absolute (as it is when that fails).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
