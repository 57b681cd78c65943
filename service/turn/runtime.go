package turn

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/store"
	"jarvis/service/textclean"
	"jarvis/tools"
)

// Runtime runs the turns of one kind of agent. Run publishes the turn's
// events (deltas, status lines) and returns how the turn ended; the service
// records that end and publishes the terminal event. Status is the agent's
// state for GET /v1/agents; Validate says why an agent cannot run, or nil.
type Runtime interface {
	Run(ctx context.Context, t *Turn, sess store.Session, agent config.Agent) Outcome
	Status(agent config.Agent) api.AgentStatus
	Validate(agent config.Agent) error
}

// Publisher publishes an event on a session's stream (and stores it).
type Publisher interface {
	Publish(sessionID, typ string, data any)
}

// Secrets resolves secret references named in the configuration.
type Secrets interface {
	Get(ref string) (string, error)
}

// Env is what a runtime receives from the service: never the service
// itself, so that a runtime sees only what it may use.
type Env struct {
	Store      *store.Store
	Publisher  Publisher
	Config     func() *config.Config // the current configuration (it is reloaded)
	Log        *slog.Logger
	Now        func() time.Time
	Secrets    Secrets
	HTTPClient *http.Client
	BaseURL    func() string // the service's own base URL, "" until known
	DataDir    string
	// Events is the session event hub, for a runtime that stores a message
	// with its event in one transaction or follows a session's stream.
	Events  *events.Hub
	Version string // the service's version (User-Agent of calls out)
	// Sandbox is the sandbox of the agent programs the service starts
	// (service.Options.Sandbox, with the service's own folders protected);
	// nil: they run unconfined.
	Sandbox *tools.Sandbox
}

// AnswerArrived puts an answer that reached a session outside any turn (an
// external agent's callback, a proxy agent's late answer) in the Inbox,
// once per delivery: key names the delivery (runtime, agent, delivery id
// or call), so the same delivery sent again adds nothing. The window marks
// it read when you have that conversation open.
func (e Env) AnswerArrived(ctx context.Context, agent config.Agent, sessionID, callID, text string, key ...string) {
	if e.Store == nil {
		return
	}
	name := agent.DisplayName
	if name == "" {
		name = agent.AgentID
	}
	added, err := e.Store.AddAnswer(context.WithoutCancel(ctx), store.InboxRow{ID: store.AnswerID(key...), Title: name + " answered",
		Body: textclean.Snippet(text, answerRunes), SessionID: sessionID, CallID: callID})
	if err != nil && e.Log != nil {
		e.Log.Error("inbox: adding an answer", "agent", agent.AgentID, "session", sessionID, "err", err)
	}
	if added && e.Log != nil {
		e.Log.Info("inbox: an answer arrived", "agent", agent.AgentID, "session", sessionID)
	}
}

// answerRunes is how much of an answer its Inbox item shows.
const answerRunes = 600

// ErrShutdown is the cause with which the service cancels what runs when it
// stops: a turn or a round table so ended is recorded as interrupted.
var ErrShutdown = errors.New("service shutting down")

// MaxIDLen caps the ids clients choose (sessions, deliveries).
const MaxIDLen = 256

// Snippet is the last-message preview a session keeps of text.
func Snippet(text string) string { return textclean.Snippet(text, snippetRunes) }

// snippetRunes is how much of a message a session's snippet keeps.
const snippetRunes = 120

// Kinds of runtime beyond the agent types: a chat agent whose provider is
// a coding CLI runs on the CLI runtime, one whose provider is acp on the
// Agent Client Protocol runtime.
const (
	KindCLI = "chat-cli"
	KindACP = "chat-acp"
)

// Registry maps an agent to the runtime that runs it: the one place that
// tells agent types apart.
type Registry struct {
	byKind map[string]Runtime
}

// Register makes rt the runtime of kind (an agent type, KindCLI or KindACP).
func (r *Registry) Register(kind string, rt Runtime) {
	if r.byKind == nil {
		r.byKind = map[string]Runtime{}
	}
	r.byKind[kind] = rt
}

// KindOf is the runtime kind of an agent under c.
func KindOf(c *config.Config, a config.Agent) string {
	if a.Type == config.TypeChat {
		switch p := c.ResolvedChat(a).Provider; {
		case p == config.ProviderACP:
			return KindACP
		case config.IsCLIProvider(p):
			return KindCLI
		}
	}
	return a.Type
}

// All returns every registered runtime, in the order of their kinds.
func (r *Registry) All() []Runtime {
	kinds := make([]string, 0, len(r.byKind))
	for k := range r.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := make([]Runtime, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, r.byKind[k])
	}
	return out
}

// For returns the runtime of an agent, or false when no runtime runs its kind.
func (r *Registry) For(c *config.Config, a config.Agent) (Runtime, bool) {
	rt, ok := r.byKind[KindOf(c, a)]
	return rt, ok
}

// PublisherFunc is a Publisher made of a function.
type PublisherFunc func(sessionID, typ string, data any)

// Publish calls f.
func (f PublisherFunc) Publish(sessionID, typ string, data any) { f(sessionID, typ, data) }

// Optional interfaces a runtime may implement.

// Outbounder is a runtime whose agents live outside the service's process
// (another program, possibly another machine): Outbound says where a
// message to agent goes, for the desktop's gate to judge before any is
// sent; "" means it stays in the process.
type Outbounder interface {
	Outbound(c *config.Config, agent config.Agent) string
}

// ReplyAwaiter is a runtime whose agents answer after their turn has ended
// (an external agent posts its reply to a callback): a synchronous
// agents_message waits for that reply instead of the turn's end.
type ReplyAwaiter interface {
	AwaitReply(ctx context.Context, sessionID, turnID string) (string, error)
}

// Describer is a runtime that adds its own details to an agent's entry in
// GET /v1/agents (the model it uses, a proxy agent's profile).
type Describer interface {
	Describe(agent config.Agent, info *api.AgentInfo)
}

// Route is an HTTP route a runtime adds to the service's table.
type Route struct {
	Pattern string // "METHOD /path/{var}"
	Handle  func(w http.ResponseWriter, r *http.Request) error
}

// RouteAdder is a runtime with routes of its own (callbacks, actions).
type RouteAdder interface {
	Routes() []Route
}

// Loader is a runtime that parses and validates an agent's settings when
// its configuration is loaded or reloaded, and logs what cannot run.
type Loader interface {
	Load(agent config.Agent)
}

// StartAwaiter is a runtime that waits for the turn's start to be stored
// (t.Stored) itself, once its work has begun (the chat runtime, once its
// model call is on its way); the service makes the others wait before Run.
type StartAwaiter interface {
	AwaitsStart()
}

// Unconfigured is Validate for a runtime whose Status says why an agent
// cannot run: st's detail when its state is "unconfigured", else nil.
func Unconfigured(st api.AgentStatus) error {
	if st.State == "unconfigured" {
		return errors.New(st.Detail)
	}
	return nil
}

// DescribeModel adds a chat agent's provider and model under c to info.
func DescribeModel(c *config.Config, a config.Agent, info *api.AgentInfo) {
	ch := c.ResolvedChat(a)
	info.Provider, info.Model = ch.Provider, ch.Model
}
