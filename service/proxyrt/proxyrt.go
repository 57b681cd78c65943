// Package proxyrt is the proxy runtime (docs/protocols/proxy-agents.md): agents of type "proxy" run elsewhere and are
// reached through the proxy client (package proxy). This package owns what the
// client leaves to the session runtime: turning a user message into a call
// and its answer into events and stored messages, the async callback wait,
// the timeout on the whole wait, late answers, and the agent's status.
//
// Events published on the session stream of a proxy turn:
//
//	assistant.delta   each streamed message or async partial, as it arrives
//	assistant.final   the whole answer (sync response, stitched stream or callbacks)
//	error             code "proxy_<kind>" (proxy.Kind): proxy_timeout, proxy_status,
//	                  proxy_malformed, proxy_too_large, proxy_redirect,
//	                  proxy_unreachable, proxy_invalid, proxy_secret
//	status            kind "thought" (one per debug thought), "agent_status"
//	                  (sessionInfo.status when it differs from the agent's
//	                  last known status), "route" (routeToUser is
//	                  off but the user messaged the agent directly), "late" (an
//	                  answer arrived after its turn timed out and was recorded)
//
// Concurrency: Runtime's maps are guarded by its mu; a proxyWait's
// stitching and publishing by its own mu, so that concurrent callbacks of one
// call publish in the order they were stitched.
package proxyrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/proxy"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// proxyConfig is the "proxy" object of a proxy agent in the config file:
// docs/protocols/proxy-agents.md's request definition plus how the agent's callbacks authenticate.
type proxyConfig struct {
	proxy.Definition
	// CallbackAuth is "token" (default: the per-session secret in the
	// callback URL, or a Standard Webhooks signature when webhookSecretRef
	// is set) or "none" (unauthenticated callbacks; warned at startup).
	CallbackAuth string `json:"callbackAuth,omitempty"`
	// WebhookSecretRef names the keyring secret (base64, with or without "whsec_")
	// with which the agent signs callbacks (Standard Webhooks).
	WebhookSecretRef string `json:"webhookSecretRef,omitempty"`
	// CallbackBaseURL replaces the service's own address in callback URLs,
	// for agents that reach the service through a tunnel or proxy.
	CallbackBaseURL string `json:"callbackBaseUrl,omitempty"`
}

// Callback limits.
const (
	lateKeep        = time.Hour // how long a timed-out call still records its late answer
	maxTrackedCalls = 1024
)

// Runtime runs the turns of proxy agents and holds their state.
type Runtime struct {
	env     turn.Env
	red     *redact.Set // what the agents' answers and errors may echo
	client  *proxy.Client
	userID  string            // the stable local user id (userReference)
	baseURL *callback.Base    // the service's own address
	replays *callback.Replays // webhook ids already applied

	defs turn.Settings[proxyConfig] // agents' "proxy" objects, parsed once

	mu      sync.Mutex
	calls   map[string]*proxyWait // call id → async call (active, then late until lateKeep)
	current map[string]*proxyWait // agent id \x00 session id → its latest async call
	status  map[string]agentReport
}

// agentReport is the last sessionInfo.status an agent sent.
type agentReport struct {
	status string
	at     time.Time
}

// New returns the proxy runtime: base is the service's own address (for
// callback URLs), red the redactor of what agents may echo.
func New(ctx context.Context, env turn.Env, base *callback.Base, red *redact.Set) (*Runtime, error) {
	uid, err := env.Store.ProxyValue(ctx, "user_id", func() string { return turn.NewID("u_") })
	if err != nil {
		return nil, fmt.Errorf("service: proxy user id: %w", err)
	}
	var secrets func(string) (string, error)
	if env.Secrets != nil {
		secrets = env.Secrets.Get
	}
	client, err := proxy.New(proxy.Options{Secrets: secrets, Logger: env.Log, Now: env.Now})
	if err != nil {
		return nil, err
	}
	return &Runtime{env: env, red: red, client: client, userID: uid, baseURL: base, replays: &callback.Replays{Store: env.Store, Now: env.Now},
		calls: map[string]*proxyWait{}, current: map[string]*proxyWait{}, status: map[string]agentReport{},
		defs: turn.Settings[proxyConfig]{Raw: func(a config.Agent) json.RawMessage { return a.Proxy }, Parse: parseProxyConfig}}, nil
}

// definition is an agent's "proxy" object, decoded and validated once
// (at load and reload, see SetConfig).
func (rt *Runtime) definition(a config.Agent) (proxyConfig, error) { return rt.defs.Get(a) }

func parseProxyConfig(a config.Agent) (proxyConfig, error) {
	var pc proxyConfig
	if len(bytes.TrimSpace(a.Proxy)) == 0 {
		return pc, fmt.Errorf("%w: agent %q is of type proxy but has no \"proxy\" definition (method, url, headers, async, timeoutSeconds, routeToUser)", proxy.ErrInvalid, a.AgentID)
	}
	dec := json.NewDecoder(bytes.NewReader(a.Proxy))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pc); err != nil {
		return pc, fmt.Errorf("%w: agent %q: proxy: %v", proxy.ErrInvalid, a.AgentID, err)
	}
	var errs []error
	if err := pc.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch pc.CallbackAuth {
	case "", "token", "none":
	default:
		errs = append(errs, &proxy.ValidationError{Field: "callbackAuth", Problem: fmt.Sprintf("%q is not one of token, none", pc.CallbackAuth)})
	}
	if pc.CallbackBaseURL != "" {
		if u, err := url.Parse(pc.CallbackBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, &proxy.ValidationError{Field: "callbackBaseUrl", Problem: "must be an absolute http(s) URL"})
		}
	}
	if len(errs) > 0 {
		return pc, fmt.Errorf("agent %q: %w", a.AgentID, errors.Join(errs...))
	}
	// Health and logs are keyed by agent id: profile names need not be unique here.
	pc.Profile.Name = a.AgentID
	return pc, nil
}

func (rt *Runtime) base(pc proxyConfig) string { return rt.baseURL.Or(pc.CallbackBaseURL) }

// callbackPath is the callback route of an agent's session.
func callbackPath(agentID, sessionID string) string {
	return "/proxy/agents/" + url.PathEscape(agentID) + "/sessions/" + url.PathEscape(sessionID) + "/callback"
}

// callbackURL is the URL handed to the agent for one call, with a token
// made for that call alone (only its hash is stored, package callback),
// valid for the call's timeout and then as long as a late answer is
// recorded. The call id lets a late answer find the turn it belongs to.
// "" when the service's address is not known or the token cannot be stored.
func (rt *Runtime) callbackURL(pc proxyConfig, agentID, sessionID, callID string) string {
	b := rt.base(pc)
	if b == "" {
		return ""
	}
	tok, hash, err := callback.NewToken("pcb_")
	if err == nil {
		err = rt.env.Store.AddProxyCallToken(context.Background(), hash, store.ProxyCall{AgentID: agentID, SessionID: sessionID, CallID: callID},
			rt.env.Now().Add(pc.Timeout()+lateKeep))
	}
	if err != nil {
		rt.env.Log.Error("proxy callback token", "agent", agentID, "err", err)
		return ""
	}
	q := url.Values{"token": {tok}, "call": {callID}}
	return b + callbackPath(agentID, sessionID) + "?" + q.Encode()
}

func (rt *Runtime) noteStatus(agentID, status string, now time.Time) {
	if status == "" {
		return
	}
	rt.mu.Lock()
	rt.status[agentID] = agentReport{status: status, at: now}
	rt.mu.Unlock()
}

// proxyWait is one async call waiting for its callbacks.
type proxyWait struct {
	id, agentID, sessionID, turnID string
	direct                         bool // a user's turn (late answers are stored as the agent's)
	test                           bool // a Test action: callbacks are accepted and dropped
	created                        time.Time
	sink                           *proxySink // nil: publish nothing

	mu    sync.Mutex
	turn  proxy.Turn
	late  atomic.Bool         // set under mu; read without it when pruning
	final chan proxy.Response // buffered 1
	fail  chan error          // buffered 1
}

func (rt *Runtime) register(w *proxyWait) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.calls) >= maxTrackedCalls/2 {
		for id, o := range rt.calls {
			if o.late.Load() && w.created.Sub(o.created) > lateKeep || len(rt.calls) >= maxTrackedCalls {
				rt.forgetLocked(id, o)
			}
		}
	}
	rt.calls[w.id] = w
	if !w.test {
		rt.current[w.agentID+"\x00"+w.sessionID] = w
	}
}

func (rt *Runtime) forgetLocked(id string, w *proxyWait) {
	delete(rt.calls, id)
	k := w.agentID + "\x00" + w.sessionID
	if rt.current[k] == w {
		delete(rt.current, k)
	}
}

// lookup finds the call a callback belongs to: by its call id, else the
// session's latest call with the agent.
func (rt *Runtime) lookup(callID, agentID, sessionID string) *proxyWait {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if w, ok := rt.calls[callID]; ok && w.agentID == agentID && w.sessionID == sessionID {
		return w
	}
	if callID != "" {
		return nil
	}
	return rt.current[agentID+"\x00"+sessionID]
}

// expire ends the wait: it returns the final answer if one is already
// there, else marks the call late so that its answer is only recorded.
func (w *proxyWait) expire() (proxy.Response, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case r := <-w.final:
		return r, true
	default:
		w.late.Store(true)
		return proxy.Response{}, false
	}
}

// proxySink publishes what a call shows as it arrives.
type proxySink struct {
	rt                *Runtime
	sessionID, turnID string
	lastStatus        string
}

func (k *proxySink) delta(text string) {
	if k == nil || text == "" {
		return
	}
	k.rt.env.Publisher.Publish(k.sessionID, api.EventDelta, api.TextEvent{Text: text, TurnID: k.turnID})
}

func (k *proxySink) thoughts(ts []string) {
	if k == nil {
		return
	}
	for _, t := range ts {
		k.rt.env.Publisher.Publish(k.sessionID, api.EventStatus, api.StatusEvent{Text: t, Kind: "thought", TurnID: k.turnID})
	}
}

func (k *proxySink) agentStatus(st string) {
	if k == nil || st == "" || st == k.lastStatus {
		return
	}
	k.lastStatus = st
	k.rt.env.Publisher.Publish(k.sessionID, api.EventStatus, api.StatusEvent{Text: st, Kind: "agent_status", TurnID: k.turnID})
}

// errProxyNoCallback: an async agent needs a callback URL and the service
// does not know its own address yet.
var errProxyNoCallback = fmt.Errorf("%w: async agent needs a callback URL, but the service's address is not known yet (set proxy.callbackBaseUrl)", proxy.ErrInvalid)

// proxyExchange sends text to the agent and waits for its whole answer: the
// response (sync), the stitched stream, or the callbacks (async), all
// within the definition's timeout. Errors are the proxy package's typed
// errors, or ctx's cause when the caller gave up.
func (rt *Runtime) proxyExchange(ctx context.Context, agentID string, pc proxyConfig, sessionID, turnID, text string, direct bool, sink *proxySink) (proxy.Response, error) {
	start := time.Now()
	in := proxy.Input{SessionID: sessionID, UserID: rt.userID, Text: text}
	var w *proxyWait
	if pc.Async {
		w = &proxyWait{id: turn.NewID("pc_"), agentID: agentID, sessionID: sessionID, turnID: turnID, direct: direct, created: start, sink: sink,
			final: make(chan proxy.Response, 1), fail: make(chan error, 1)}
		if in.CallbackURL = rt.callbackURL(pc, agentID, sessionID, w.id); in.CallbackURL == "" {
			return proxy.Response{}, errProxyNoCallback
		}
		// Registered before the call: a fast agent may call back before its
		// acknowledgement has been read.
		rt.register(w)
	}
	chunks := 0
	resp, err := rt.client.Call(ctx, pc.Definition, in, func(ch proxy.Chunk) {
		chunks++
		sink.delta(ch.Text)
		sink.thoughts(ch.Thoughts)
		sink.agentStatus(ch.Status)
	})
	if err != nil {
		if w != nil {
			w.expire() // anything the agent still sends is recorded as late
		}
		return proxy.Response{}, err
	}
	if w == nil {
		if chunks == 0 {
			sink.thoughts(resp.Thoughts)
		}
		sink.agentStatus(resp.Status)
		rt.noteStatus(agentID, resp.Status, rt.env.Now())
		return resp, nil
	}
	rt.noteStatus(agentID, resp.Status, rt.env.Now())
	w.mu.Lock()
	sink.agentStatus(resp.Status)
	w.mu.Unlock()

	timeout := pc.Timeout()
	timer := time.NewTimer(timeout - time.Since(start))
	defer timer.Stop()
	key := pc.HealthKey()
	select {
	case r := <-w.final:
		rt.client.Health().Record(key, nil)
		return r, nil
	case err := <-w.fail:
		w.expire()
		rt.client.Health().Record(key, err)
		return proxy.Response{}, err
	case <-ctx.Done():
		if r, ok := w.expire(); ok {
			return r, nil
		}
		return proxy.Response{}, context.Cause(ctx)
	case <-timer.C:
		if r, ok := w.expire(); ok {
			rt.client.Health().Record(key, nil)
			return r, nil
		}
		err := fmt.Errorf("%w: the agent acknowledged but sent no complete answer to the callback URL within %s", proxy.ErrTimeout, timeout)
		rt.client.Health().Record(key, err)
		return proxy.Response{}, err
	}
}

// proxyMessageMeta is the meta of a stored proxy answer (TranscriptMessage.meta).
type proxyMessageMeta struct {
	ProxyAgent        string       `json:"proxyAgent"`
	MessageID         string       `json:"messageId,omitempty"`
	Thoughts          []string     `json:"thoughts,omitempty"`
	AgentStatus       string       `json:"agentStatus,omitempty"`
	ConversationState string       `json:"conversationState,omitempty"`
	Parts             []proxy.Part `json:"parts,omitempty"` // non-text outputs (image, file, audio)
	RouteToUser       bool         `json:"routeToUser"`
	Late              bool         `json:"late,omitempty"`
	CallID            string       `json:"callId,omitempty"`
	// Sanitized records the NUL and invalid UTF-8 bytes removed from the answer.
	Sanitized *proxy.Sanitized `json:"sanitized,omitempty"`
}

func proxyMeta(agentID string, pc proxyConfig, r proxy.Response) proxyMessageMeta {
	m := proxyMessageMeta{ProxyAgent: agentID, MessageID: r.MessageID, Thoughts: r.Thoughts, AgentStatus: r.Status,
		ConversationState: r.ConversationState, RouteToUser: pc.RouteToUser}
	if r.Sanitized.Changed() {
		san := r.Sanitized
		m.Sanitized = &san
	}
	for _, p := range r.Parts {
		if p.Type != "text" {
			m.Parts = append(m.Parts, p)
		}
	}
	return m
}

func (m proxyMessageMeta) json() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// Run is the proxy runtime: it forwards the turn's user message to the
// agent and shows its answer.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	pc, err := rt.definition(agent)
	if err != nil {
		return turn.Outcome{Fail: proxyErrorEvent(agent, err)}
	}
	text := t.User.Content
	// A delegated turn (t.chain set by agents_message) goes back to its
	// supervisor anyway; only a user's own message needs the note.
	if !pc.RouteToUser && len(t.Chain) == 0 {
		rt.env.Publisher.Publish(sess.ID, api.EventStatus, api.StatusEvent{Kind: "route", TurnID: t.ID,
			Text: fmt.Sprintf("Route response to user is off for %s: its answers normally go to the supervising agent. You messaged it directly, so this answer is shown to you.", agent.DisplayName)})
	}
	// agent_status events say when the agent's status changes, not on every turn.
	rt.mu.Lock()
	sink := &proxySink{rt: rt, sessionID: sess.ID, turnID: t.ID, lastStatus: rt.status[agent.AgentID].status}
	rt.mu.Unlock()
	resp, err := rt.proxyExchange(ctx, agent.AgentID, pc, sess.ID, t.ID, text, true, sink)
	if err != nil {
		return turn.Outcome{Fail: proxyErrorEvent(agent, err)}
	}
	answer := store.Message{SessionID: sess.ID, TurnID: t.ID, Role: "assistant", Content: resp.Output, Meta: proxyMeta(agent.AgentID, pc, resp).json()}
	return turn.Outcome{Final: resp.Output, Last: &answer}
}

// proxyErrorCode is the error-event code of a proxy call's error.
func proxyErrorCode(err error) string {
	switch k := proxy.Kind(err); k {
	case "":
		return "proxy_error"
	case "cancelled":
		return "cancelled"
	default:
		return "proxy_" + k
	}
}

func proxyErrorEvent(agent config.Agent, err error) *api.ErrorEvent {
	code := proxyErrorCode(err)
	msg := agent.DisplayName + ": " + err.Error()
	if code == "proxy_timeout" {
		msg = fmt.Sprintf("%s did not answer in time (%v). The session is still usable; an answer that arrives later is recorded but does not reopen this turn.", agent.DisplayName, err)
	}
	return &api.ErrorEvent{Code: code, Message: msg}
}

// recordLate stores an answer that arrived after its call had ended.
func (rt *Runtime) recordLate(w *proxyWait, agent config.Agent, pc proxyConfig, sessionID string, r proxy.Response) {
	meta := proxyMeta(agent.AgentID, pc, r)
	meta.Late = true
	role, turnID := "status", ""
	if w != nil {
		meta.CallID, turnID = w.id, w.turnID
		if w.direct {
			role = "assistant"
		}
	} else if sess, err := rt.env.Store.Session(context.Background(), sessionID); err == nil && sess.AgentID == agent.AgentID {
		role = "assistant"
	}
	msg, err := rt.env.Store.AddMessage(context.Background(), store.Message{SessionID: sessionID, TurnID: turnID, Role: role, Content: rt.red.String(r.Output), Meta: rt.red.String(meta.json())})
	if err != nil {
		rt.env.Log.Error("store late proxy answer", "agent", agent.AgentID, "session", sessionID, "err", err)
		return
	}
	rt.env.Log.Info("late proxy answer recorded", "agent", agent.AgentID, "session", sessionID, "turn", turnID)
	rt.env.AnswerArrived(context.Background(), agent, sessionID, meta.CallID, rt.red.String(r.Output), "proxy", agent.AgentID, sessionID, lateKey(meta.CallID, msg.ID))
	rt.env.Publisher.Publish(sessionID, api.EventStatus, api.StatusEvent{Kind: "late", TurnID: turnID,
		Text: fmt.Sprintf("%s answered after the turn had timed out; the answer was recorded in the transcript.", agent.DisplayName)})
}

// lateKey names a late answer's delivery for the Inbox: its call (a call
// has one final answer), else the message it was stored as.
func lateKey(callID string, msgID int64) string {
	if callID != "" {
		return "call " + callID
	}
	return fmt.Sprint("message ", msgID)
}

// Describe fills the status and proxy details of a proxy agent in GET /v1/agents.
func (rt *Runtime) Describe(a config.Agent, info *api.AgentInfo) {
	pc, err := rt.definition(a)
	if err != nil {
		info.Status = api.AgentStatus{State: "unconfigured", Detail: err.Error()}
		return
	}
	h := rt.client.Health().Get(pc.HealthKey())
	switch h.State {
	case proxy.HealthHealthy:
		info.Status = api.AgentStatus{State: "ok"}
	case proxy.HealthFailing:
		info.Status = api.AgentStatus{State: "failing", Detail: h.LastError}
	default:
		info.Status = api.AgentStatus{State: "unknown"}
	}
	if !h.LastChecked.IsZero() {
		info.Status.At = store.Timestamp(h.LastChecked)
	}
	rt.mu.Lock()
	rep := rt.status[a.AgentID]
	rt.mu.Unlock()
	if rep.status == proxy.StatusError && info.Status.State == "ok" {
		info.Status = api.AgentStatus{State: "failing", Detail: "the agent reported sessionInfo.status \"error\"", At: store.Timestamp(rep.at)}
	}
	pi := &api.ProxyAgentInfo{ExternalPlatform: pc.Profile.ExternalPlatform, Avatar: pc.Profile.Avatar, Async: pc.Async,
		Streaming: pc.Stream != nil && pc.Stream.Enable && !pc.Async, RouteToUser: pc.RouteToUser,
		TimeoutSeconds: int(pc.Timeout() / time.Second), AgentStatus: rep.status, Failures: h.Failures}
	if pc.Async {
		if b := rt.base(pc); b != "" {
			pi.CallbackURLTemplate = b + "/proxy/agents/" + url.PathEscape(a.AgentID) + "/sessions/{sessionId}/callback?token={per-call token}&call={call id}"
		}
		pi.CallbackAuth = "token"
		if pc.CallbackAuth == "none" {
			pi.CallbackAuth = "none"
		} else if pc.WebhookSecretRef != "" {
			pi.CallbackAuth = "token+webhook-signature"
		}
	}
	info.Proxy = pi
}

// Status is a proxy agent's status for GET /v1/agents.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	var info api.AgentInfo
	rt.Describe(a, &info)
	return info.Status
}

// Validate says why a proxy agent cannot run: its definition is invalid.
func (rt *Runtime) Validate(a config.Agent) error {
	_, err := rt.definition(a)
	return err
}

// Load parses and validates a proxy agent's definition when its
// configuration is loaded or reloaded, and logs what cannot run.
func (rt *Runtime) Load(a config.Agent) {
	pc, err := rt.definition(a)
	switch {
	case err != nil:
		rt.env.Log.Warn("proxy agent cannot run until its definition is fixed", "agent", a.AgentID, "err", err)
	case pc.CallbackAuth == "none":
		rt.env.Log.Warn("proxy agent accepts unauthenticated callbacks (callbackAuth: none)", "agent", a.AgentID)
	}
}

// Routes are the proxy agents' own routes: the callback of async agents
// and the setup panel's Test action.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "POST /v1/agents/{agentId}/test", Handle: rt.handleProxyTest},
		{Pattern: "POST /proxy/agents/{agentId}/sessions/{sessionId}/callback", Handle: rt.handleProxyCallback},
	}
}

// Outbound says where a message to a proxy agent goes.
func (rt *Runtime) Outbound(_ *config.Config, target config.Agent) string {
	where := ""
	if pc, err := rt.definition(target); err == nil {
		where = " at " + pc.URL
	}
	return fmt.Sprintf("proxy agent %q%s (another program, possibly another machine)", target.AgentID, where)
}
