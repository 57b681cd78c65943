// Package a2art is the A2A runtime: agents of type "a2a" are remote agents
// reached over the Agent2Agent protocol (A2A v0.3, a2a-go's client). An
// agent is configured by its agent card's URL (or the card inline); each
// turn is one message to it: message/stream when the card says it streams
// (artifact updates become deltas, status messages status lines), else
// message/send; its task is kept with the reply (contextId and taskId in
// the message's meta) so the next turn continues the same A2A context. A
// stream that breaks mid-task is resumed once with tasks/resubscribe, then
// read with tasks/get; a cancelled turn cancels the task (tasks/cancel).
//
// One policy: every message leaves only after the desktop's gate allowed
// it, as a tool.request of the service tool agents_message (source
// "service"), so it is prompted for and audited like a chat agent's
// delegation to an external agent; and every address — the card's URL, the
// URL the card names, each connection — passes the one address check
// (service/netguard). The card's security scheme (HTTP bearer, or an API
// key header) gets the keyring secret the agent's secretRef names.
// It gets a turn.Env and explicit Options, never the service.
package a2art

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/netguard"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/tools"
)

// Options is what the runtime needs from the service beyond its turn.Env.
type Options struct {
	// Waiter sends each outbound message to the desktop's gate first.
	Waiter *toolwait.Waiter
	// LatePoll is how often FollowLate first reads a task whose turn ended
	// before it did (default one minute; less and less often after).
	LatePoll time.Duration
}

// settings is an a2a agent's "a2a" object in config.json.
type settings struct {
	// CardURL is the agent card's URL (…/.well-known/agent-card.json), or
	// the agent's base URL (the well-known path is added).
	CardURL string `json:"cardUrl,omitempty"`
	// Card is the agent card inline, instead of CardURL.
	Card json.RawMessage `json:"card,omitempty"`
	// SecretRef names the keyring secret the card's security scheme gets
	// (a bearer token, or an API key).
	SecretRef string `json:"secretRef,omitempty"`
	// WebhookSecretRef names the keyring secret (Standard Webhooks, base64
	// with or without "whsec_") the agent signs its push notifications with.
	WebhookSecretRef string `json:"webhookSecretRef,omitempty"`
	// TimeoutSeconds bounds one turn's wait for the agent. Default 300.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`

	card *a2a.AgentCard // the inline card, decoded
}

const defaultTimeout = 300 * time.Second

func parse(a config.Agent) (settings, error) {
	var x settings
	if len(a.A2A) == 0 || string(a.A2A) == "null" {
		return x, fmt.Errorf("A2A agent %q has no \"a2a\" settings (a2a.cardUrl is required)", a.AgentID)
	}
	dec := json.NewDecoder(bytes.NewReader(a.A2A))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return x, fmt.Errorf("A2A agent %q: a2a: %v", a.AgentID, err)
	}
	switch {
	case x.CardURL == "" && len(x.Card) == 0:
		return x, fmt.Errorf("A2A agent %q: a2a.cardUrl (or an inline a2a.card) is required", a.AgentID)
	case x.CardURL != "" && len(x.Card) > 0:
		return x, fmt.Errorf("A2A agent %q: give a2a.cardUrl or a2a.card, not both", a.AgentID)
	case x.TimeoutSeconds < 0:
		return x, fmt.Errorf("A2A agent %q: a2a.timeoutSeconds must not be negative", a.AgentID)
	}
	if x.CardURL != "" {
		if err := checkURL(x.CardURL); err != nil {
			return x, fmt.Errorf("A2A agent %q: a2a.cardUrl: %v", a.AgentID, err)
		}
	} else {
		var c a2a.AgentCard
		if err := json.Unmarshal(x.Card, &c); err != nil {
			return x, fmt.Errorf("A2A agent %q: a2a.card is not an agent card: %v", a.AgentID, err)
		}
		if err := checkCard(&c); err != nil {
			return x, fmt.Errorf("A2A agent %q: a2a.card: %v", a.AgentID, err)
		}
		x.card = &c
	}
	return x, nil
}

// checkURL accepts an absolute http(s) URL whose host passes the address check.
func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an absolute http(s) URL, got %q", v)
	}
	return netguard.CheckHost(u.Hostname())
}

// checkCard checks the address a card sends messages to.
func checkCard(c *a2a.AgentCard) error {
	if c.URL == "" {
		return errors.New("the card names no URL to send messages to")
	}
	if err := checkURL(c.URL); err != nil {
		return fmt.Errorf("the card's URL %s is refused: %v", c.URL, err)
	}
	if c.PreferredTransport != "" && c.PreferredTransport != a2a.TransportProtocolJSONRPC {
		for _, i := range c.AdditionalInterfaces {
			if i.Transport == a2a.TransportProtocolJSONRPC {
				return checkURL(i.URL)
			}
		}
		return fmt.Errorf("the agent speaks %s only; Jarvis speaks A2A over JSON-RPC", c.PreferredTransport)
	}
	return nil
}

// Runtime runs A2A agents.
type Runtime struct {
	env      turn.Env
	opts     Options
	settings turn.Settings[settings]
	hc       *http.Client
	mu       sync.Mutex
	cards    map[string]*a2a.AgentCard // agent id -> the card last resolved
	push     pushes                    // the turns waiting for push deliveries (push.go)
	replays  callback.Replays          // the webhook-ids of signed push deliveries taken
}

// New returns the A2A runtime.
func New(env turn.Env, opts Options) *Runtime {
	rt := &Runtime{env: env, opts: opts, cards: map[string]*a2a.AgentCard{}, replays: callback.Replays{Store: env.Store, Now: env.Now}}
	rt.settings.Raw = func(a config.Agent) json.RawMessage { return a.A2A }
	rt.settings.Parse = parse
	rt.hc = netguard.Client(env.HTTPClient) // every connection passes the address check
	return rt
}

// Validate says why an agent cannot run (its settings), or nil.
func (rt *Runtime) Validate(a config.Agent) error {
	_, err := rt.settings.Get(a)
	return err
}

// Load logs an agent whose settings cannot run.
func (rt *Runtime) Load(a config.Agent) {
	if err := rt.Validate(a); err != nil {
		rt.env.Log.Warn("A2A agent is not usable", "agent", a.AgentID, "err", err)
	}
}

// Status is ok when the settings are valid (the card is read at the first turn).
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	if err := rt.Validate(a); err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	return api.AgentStatus{State: "ok"}
}

// Describe adds the card's skills (once the card was read, or inline).
func (rt *Runtime) Describe(a config.Agent, info *api.AgentInfo) {
	x, err := rt.settings.Get(a)
	if err != nil {
		return
	}
	card := x.card
	rt.mu.Lock()
	if c := rt.cards[a.AgentID]; c != nil {
		card = c
	}
	rt.mu.Unlock()
	out := &api.A2AAgentInfo{CardURL: x.CardURL, Skills: []api.A2ASkill{}}
	if card != nil {
		out.Name = card.Name
		for _, s := range card.Skills {
			out.Skills = append(out.Skills, api.A2ASkill{ID: s.ID, Name: s.Name, Description: s.Description})
		}
	}
	info.A2A = out
}

// Outbound says where a message to an A2A agent goes, for the gate.
func (rt *Runtime) Outbound(_ *config.Config, a config.Agent) string {
	where := "a remote agent"
	if x, err := rt.settings.Get(a); err == nil {
		if x.CardURL != "" {
			where = x.CardURL
		} else if x.card != nil {
			where = x.card.URL
		}
	}
	return fmt.Sprintf("A2A agent %q (%s)", a.AgentID, where)
}

// card returns the agent's card: inline, or read from its URL.
func (rt *Runtime) card(ctx context.Context, a config.Agent, x settings) (*a2a.AgentCard, error) {
	if x.card != nil {
		return x.card, nil
	}
	base, path := x.CardURL, ""
	if i := strings.Index(base, "/.well-known/"); i >= 0 {
		base, path = base[:i], base[i:]
	} else if u, err := url.Parse(base); err == nil && strings.HasSuffix(u.Path, ".json") {
		path = u.Path
		u.Path = ""
		base = u.String()
	}
	var opts []agentcard.ResolveOption
	if path != "" {
		opts = append(opts, agentcard.WithPath(path))
	}
	card, err := agentcard.NewResolver(rt.hc).Resolve(ctx, base, opts...)
	if err != nil {
		return nil, fmt.Errorf("its agent card could not be read from %s: %v", x.CardURL, plain(err))
	}
	if err := checkCard(card); err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.cards[a.AgentID] = card
	rt.mu.Unlock()
	return card, nil
}

// plain says what a transport error means without Go's wrapping.
func plain(err error) string {
	var se *agentcard.ErrStatusNotOK
	switch {
	case errors.As(err, &se):
		return "the server answered " + se.Status
	case errors.Is(err, netguard.ErrRefused):
		return "the address is refused: " + err.Error()
	}
	return err.Error()
}

// credentials give the card's security schemes the agent's secret.
type credentials struct{ secret string }

func (c credentials) Get(context.Context, a2aclient.SessionID, a2a.SecuritySchemeName) (a2aclient.AuthCredential, error) {
	return a2aclient.AuthCredential(c.secret), nil
}

// meta is what the reply's message keeps of the A2A exchange.
type meta struct {
	A2A struct {
		ContextID string `json:"contextId"`
		TaskID    string `json:"taskId,omitempty"`
		State     string `json:"state,omitempty"`
	} `json:"a2a"`
}

// lastContext is the A2A context of the session's latest reply, or "".
func (rt *Runtime) lastContext(ctx context.Context, t *turn.Turn) string {
	rows, err := rt.env.Store.Messages(ctx, t.SessionID)
	if err != nil {
		return ""
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if m := rows[i]; m.Role == "assistant" && m.TurnID != t.ID && strings.Contains(m.Meta, `"a2a"`) {
			var v meta
			if json.Unmarshal([]byte(m.Meta), &v) == nil && v.A2A.ContextID != "" {
				return v.A2A.ContextID
			}
		}
	}
	return ""
}

// gate sends the message to the desktop's gate as agents_message and
// waits for its answer; false with the turn's outcome when it was not allowed.
func (rt *Runtime) gate(ctx context.Context, t *turn.Turn, agent config.Agent) (turn.Outcome, bool) {
	args, _ := json.Marshal(tools.AgentsMessageArgs{AgentID: agent.AgentID, Content: t.User.Content, Session: "latest", Mode: "sync"})
	where := rt.Outbound(nil, agent)
	r := rt.opts.Waiter.Ask(ctx, t, "agents_message", args, string(tools.Risky), "send the message to "+where, "service", where)
	switch {
	case r.OK:
		return turn.Outcome{}, true
	case ctx.Err() != nil:
		return turn.Failed("cancelled", "Stopped: the turn was cancelled before the message was sent."), false
	}
	why := "it was not allowed"
	if r.Error != nil {
		why = *r.Error
	}
	return turn.Failed("a2a_denied", "The message to %s was not sent: %s.", agent.DisplayName, why), false
}

// dial makes the client of agent from its card: JSON-RPC, the output modes
// Jarvis shows, the push configuration (nil: none), and the keyring secret
// the card's scheme takes (the session id goes with ctx). A secret that
// cannot be read is a keyError.
func (rt *Runtime) dial(ctx context.Context, agent config.Agent, x settings, card *a2a.AgentCard, pushCfg *a2a.PushConfig, sessionID string) (context.Context, *a2aclient.Client, error) {
	fopts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(rt.hc), a2aclient.WithConfig(a2aclient.Config{
		PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}, AcceptedOutputModes: []string{"text/plain", "text/markdown", "application/json"},
		PushConfig: pushCfg})}
	if x.SecretRef != "" {
		if rt.env.Secrets == nil {
			return ctx, nil, keyError{fmt.Errorf("Agent %q: its key is in the keyring, and there is no keyring here.", agent.AgentID)}
		}
		secret, err := rt.env.Secrets.Get(x.SecretRef)
		if err != nil {
			return ctx, nil, keyError{fmt.Errorf("Agent %q: its key could not be read from the keyring: %v", agent.AgentID, err)}
		}
		fopts = append(fopts, a2aclient.WithInterceptors(&a2aclient.AuthInterceptor{Service: credentials{secret}}))
		ctx = a2aclient.WithSessionID(ctx, a2aclient.SessionID(sessionID))
	}
	client, err := a2aclient.NewFromCard(ctx, card, fopts...)
	if err != nil {
		return ctx, nil, fmt.Errorf("Agent %q: %v", agent.AgentID, err)
	}
	return ctx, client, nil
}

// keyError is a dial that failed on the agent's keyring secret.
type keyError struct{ error }

// Run is one turn: the gate, the card, then the message.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	x, err := rt.settings.Get(agent)
	if err != nil {
		return turn.Failed("a2a_unconfigured", "%v", err)
	}
	// The gate first: nothing leaves before the desktop allowed it. A turn
	// delegated by another agent was judged already: its agents_message
	// call went to the gate before this turn started.
	if len(t.Delegators()) == 0 {
		if out, ok := rt.gate(ctx, t, agent); !ok {
			return out
		}
	}
	timeout := defaultTimeout
	if x.TimeoutSeconds > 0 {
		timeout = time.Duration(x.TimeoutSeconds * float64(time.Second))
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	card, err := rt.card(cctx, agent, x)
	if err != nil {
		return turn.Failed("a2a_unreachable", "Agent %q: %v", agent.AgentID, err)
	}
	pushCfg, pushed, endPush := rt.pushFor(agent.AgentID, card)
	var x2 *exchange
	defer func() {
		if pushed != nil && x2 != nil && x2.taskID != "" && ctx.Err() == nil && !x2.ended() {
			// The turn is over and its task is not: its answer may
			// still come by push notification.
			rt.awaitLate(pushed, endPush, agent, t.SessionID, x2.taskID)
			return
		}
		endPush()
	}()
	cctx, client, err := rt.dial(cctx, agent, x, card, pushCfg, t.SessionID)
	if err != nil {
		if errors.As(err, new(keyError)) {
			return turn.Failed("a2a_unconfigured", "%v", err)
		}
		return turn.Failed("a2a_unreachable", "%v", err)
	}
	defer client.Destroy()

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: t.User.Content})
	msg.ContextID = rt.lastContext(cctx, t)
	x2 = &exchange{rt: rt, t: t, agent: agent, client: client, push: pushed}
	if card.Capabilities.Streaming {
		err = x2.stream(cctx, &a2a.MessageSendParams{Message: msg})
	} else {
		err = x2.send(cctx, &a2a.MessageSendParams{Message: msg})
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		x2.cancelTask()
		return turn.Failed("cancelled", "Stopped: the turn was cancelled, and the agent was asked to cancel its task.")
	}
	if cctx.Err() == context.DeadlineExceeded {
		x2.cancelTask()
		return turn.Failed("a2a_timeout", "Agent %q did not finish within %s; its task was cancelled.", agent.AgentID, timeout)
	}
	if err != nil {
		return turn.Failed("a2a_failed", "Agent %q: %v", agent.AgentID, plain(err))
	}
	return x2.outcome()
}
