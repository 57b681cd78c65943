// Package externalrt is the external runtime. External agents (docs/protocols/external-agents.md): out-of-process programs that get the user's
// messages on their inputUrl and answer later, any number of times, by
// POSTing to the callback URL the service gave them (callback.go).
//
// How a turn of an external agent ends: the forward itself is the turn. The
// runtime publishes a status event "Sent to external agent", POSTs the seed's
// payload to inputUrl, and ends the turn at once — with an assistant.final
// whose text is that status (nothing is stored as an assistant message) when
// the agent answered 2xx, or with an error event (and a stored "status" line)
// when it did not. The session is then free for the next message. Replies
// arrive later as separate assistant.final events with "origin": "external"
// and a fresh turn_id of their own, each stored as an assistant message.
//
// Concurrency: a Runtime's token map is guarded by its mutex; the base URL
// (package callback) may be refreshed by every request.
package externalrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/httpapi"
	"jarvis/service/netguard"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/webhook"
)

const (
	externalDefaultTimeout  = 5 * time.Second
	externalDefaultBackoff  = 250 * time.Millisecond
	externalMaxRetries      = 10
	externalDefaultMaxBytes = 1 << 20

	externalStatusSent        = "Sent to external agent"
	kindExternalSent          = "external.sent"
	kindExternalForwardFailed = "external.forward_failed"
	codeExternalForwardFailed = "external_forward_failed"

	externalAuthToken = "token" // default: the per-session secret in the URL (or a signature)
	externalAuthNone  = "none"  // unauthenticated callbacks (warned at startup)
)

// externalSettings is an external agent's "external" object in config.json.
type externalSettings struct {
	// InputURL receives the user's messages (docs/protocols/external-agents.md's payload).
	InputURL string `json:"inputUrl"`
	// CallbackBaseURL is the base of the callback URL handed to the agent;
	// default the URL the service itself is called on (loopback).
	CallbackBaseURL string `json:"callbackBaseUrl,omitempty"`
	// TimeoutSeconds bounds one POST to inputUrl. Default 5.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// Retries after a refused connection or a 5xx answer. Default 0 (off).
	Retries int `json:"retries,omitempty"`
	// RetryBackoffMs is the first wait between attempts, doubled each time. Default 250.
	RetryBackoffMs int `json:"retryBackoffMs,omitempty"`
	// SecretRef names a keyring secret (Standard Webhooks: base64, with or
	// without "whsec_"): callbacks may be signed with it, and forwards are signed with it.
	SecretRef string `json:"secretRef,omitempty"`
	// CallbackAuth is "token" (default) or "none" (unauthenticated callbacks).
	CallbackAuth string `json:"callbackAuth,omitempty"`
	// MaxMessageBytes caps a callback body. Default 1 MiB.
	MaxMessageBytes int64 `json:"maxMessageBytes,omitempty"`
}

// externalSettings is an external agent's settings, decoded and validated
// once (at load and reload, see SetConfig).
func (rt *Runtime) externalSettings(a config.Agent) (externalSettings, error) {
	return rt.settings.Get(a)
}

// parseExternalSettings reads and validates an external agent's settings.
func parseExternalSettings(a config.Agent) (externalSettings, error) {
	var x externalSettings
	if len(a.External) == 0 || string(a.External) == "null" {
		return x, fmt.Errorf("external agent %q has no \"external\" settings (external.inputUrl is required)", a.AgentID)
	}
	dec := json.NewDecoder(bytes.NewReader(a.External))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return x, fmt.Errorf("external agent %q: external: %v", a.AgentID, err)
	}
	checkURL := func(field, v string) (*url.URL, error) {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("external agent %q: external.%s must be an absolute http(s) URL, got %q", a.AgentID, field, v)
		}
		return u, nil
	}
	if x.InputURL == "" {
		return x, fmt.Errorf("external agent %q: external.inputUrl is required", a.AgentID)
	}
	u, err := checkURL("inputUrl", x.InputURL)
	if err != nil {
		return x, err
	}
	if err := netguard.CheckHost(u.Hostname()); err != nil {
		return x, fmt.Errorf("external agent %q: external.inputUrl: %v", a.AgentID, err)
	}
	if x.CallbackBaseURL != "" {
		if _, err := checkURL("callbackBaseUrl", x.CallbackBaseURL); err != nil {
			return x, err
		}
		x.CallbackBaseURL = strings.TrimRight(x.CallbackBaseURL, "/")
	}
	switch x.CallbackAuth {
	case "":
		x.CallbackAuth = externalAuthToken
	case externalAuthToken, externalAuthNone:
	default:
		return x, fmt.Errorf("external agent %q: external.callbackAuth must be \"token\" or \"none\", got %q", a.AgentID, x.CallbackAuth)
	}
	if x.TimeoutSeconds < 0 || x.Retries < 0 || x.RetryBackoffMs < 0 || x.MaxMessageBytes < 0 {
		return x, fmt.Errorf("external agent %q: external timeouts, retries and sizes must not be negative", a.AgentID)
	}
	if x.Retries > externalMaxRetries {
		return x, fmt.Errorf("external agent %q: external.retries is at most %d", a.AgentID, externalMaxRetries)
	}
	return x, nil
}

func (x externalSettings) timeout() time.Duration {
	if x.TimeoutSeconds == 0 {
		return externalDefaultTimeout
	}
	return time.Duration(x.TimeoutSeconds * float64(time.Second))
}

func (x externalSettings) backoff() time.Duration {
	if x.RetryBackoffMs == 0 {
		return externalDefaultBackoff
	}
	return time.Duration(x.RetryBackoffMs) * time.Millisecond
}

func (x externalSettings) maxBytes() int64 {
	if x.MaxMessageBytes == 0 {
		return externalDefaultMaxBytes
	}
	return x.MaxMessageBytes
}

func (x externalSettings) authLabel() string {
	switch {
	case x.CallbackAuth == externalAuthNone:
		return externalAuthNone
	case x.SecretRef != "":
		return "token+signature"
	}
	return externalAuthToken
}

// Runtime runs the turns of external agents and takes their callbacks.
type Runtime struct {
	env  turn.Env
	red  *redact.Set    // what agents' replies and statuses may echo
	base *callback.Base // the service's own address, for callback URLs

	settings  turn.Settings[externalSettings] // agents' "external" objects, parsed once
	lastPrune atomic.Int64                    // unix seconds of the last pruning (pruneExternal)
	replays   *callback.Replays               // delivery ids (claimed by store.ExternalInject)
	rejects   rejectAudit                     // counts of rejected callbacks (rejects.go)

	// hc is the service's client without redirects: a 3xx from inputUrl is
	// a failed forward, never followed, so the user's message and the
	// callback URL (with its token) never reach another address.
	hc *http.Client

	mu     sync.Mutex
	tokens map[string]string // session id → callback token minted by this process
}

// externalCallbackBase returns the base of an agent's callback URLs.
func (rt *Runtime) externalCallbackBase(x externalSettings) (string, error) {
	if b := rt.base.Or(x.CallbackBaseURL); b != "" {
		return b, nil
	}
	return "", errors.New("the service does not know its own URL yet; set external.callbackBaseUrl in config.json")
}

// externalToken returns the session's callback token, minting one (and
// storing its hash) when this process has none that is still valid.
func (rt *Runtime) externalToken(ctx context.Context, sessionID string) (string, error) {
	rt.mu.Lock()
	tok := rt.tokens[sessionID]
	rt.mu.Unlock()
	if tok != "" {
		owner, err := rt.env.Store.ExternalTokenSession(ctx, callback.HashToken(tok))
		if err == nil && owner == sessionID {
			return tok, nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		// Revoked (the session was deleted since): mint a new one.
	}
	tok, hash, err := callback.NewToken("xcb_")
	if err != nil {
		return "", err
	}
	if err := rt.env.Store.AddExternalToken(ctx, sessionID, hash); err != nil {
		return "", err
	}
	rt.mu.Lock()
	if rt.tokens == nil {
		rt.tokens = map[string]string{}
	}
	rt.tokens[sessionID] = tok
	rt.mu.Unlock()
	return tok, nil
}

// externalCallbackURL returns the URL the session's agent posts replies to.
func (rt *Runtime) externalCallbackURL(ctx context.Context, x externalSettings, sessionID string) (string, error) {
	base, err := rt.externalCallbackBase(x)
	if err != nil {
		return "", err
	}
	tok, err := rt.externalToken(ctx, sessionID)
	if err != nil {
		return "", err
	}
	return base + "/external/sessions/" + url.PathEscape(sessionID) + "/messages?token=" + tok, nil
}

// Run is the external runtime: forward the turn's user message to
// the agent's inputUrl; the forward ends the turn (see the file comment).
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	bg := context.Background()
	x, err := rt.externalSettings(agent)
	if err != nil {
		return turn.Failed("external_not_configured", "%s", err.Error())
	}
	user := t.User
	cb, err := rt.externalCallbackURL(bg, x, sess.ID)
	if err != nil {
		return turn.Failed("external_not_configured", "Cannot forward to external agent %q: %v", agent.AgentID, err)
	}
	created := user.CreatedAt
	if ts, err := time.Parse(time.RFC3339Nano, created); err == nil {
		created = ts.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	in := api.ExternalInput{SessionID: sess.ID, AgentID: agent.AgentID, CallbackURL: cb,
		Message: api.ExternalInputMessage{Type: "user", Text: user.Content, CreatedAt: created}}
	// Published before the POST: a reply posted while the agent is still
	// answering it comes after this line, which it replaces.
	rt.env.Publisher.Publish(sess.ID, api.EventStatus, api.StatusEvent{Text: externalStatusSent, Kind: kindExternalSent, TurnID: t.ID})
	start := rt.env.Now()
	detail, err := rt.forwardExternal(ctx, x, in, t.ID)
	elapsed := rt.env.Now().Sub(start)
	if serr := rt.env.Store.SetExternalForward(bg, agent.AgentID, err == nil, detail); serr != nil {
		rt.env.Log.Error("external agent status", "agent", agent.AgentID, "err", serr)
	}
	if err != nil {
		rt.env.Log.Warn("forward to external agent failed", "session", sess.ID, "agent", agent.AgentID, "detail", detail, "ms", elapsed.Milliseconds())
		msg := "Forward to external agent failed: " + detail
		rt.env.Publisher.Publish(sess.ID, api.EventStatus, api.StatusEvent{Text: msg, Kind: kindExternalForwardFailed, TurnID: t.ID})
		line := store.Message{SessionID: sess.ID, TurnID: t.ID, Role: "status", Content: msg, Meta: `{"kind":"` + kindExternalForwardFailed + `"}`}
		return turn.Outcome{Fail: &api.ErrorEvent{Code: codeExternalForwardFailed, Message: msg}, Last: &line}
	}
	rt.env.Log.Info("forwarded to external agent", "session", sess.ID, "agent", agent.AgentID, "result", detail, "ms", elapsed.Milliseconds())
	return turn.Outcome{Final: externalStatusSent, Kind: "status"}
}

// forwardExternal POSTs the input to inputUrl, retrying refused connections
// and 5xx answers when the agent's settings allow it. Every attempt carries
// the same Idempotency-Key (the turn id), so an agent that saw an attempt
// whose answer was lost can ignore the retry. detail describes the result
// (without secrets: the callback URL is never part of it).
func (rt *Runtime) forwardExternal(ctx context.Context, x externalSettings, in api.ExternalInput, key string) (detail string, err error) {
	body, err := json.Marshal(in)
	if err != nil {
		return "could not encode the message", err
	}
	var secret []byte
	if x.SecretRef != "" {
		sec, err := rt.externalSecret(x)
		if err != nil {
			return err.Error(), err
		}
		secret = sec
	}
	wait := x.backoff()
	for attempt := 0; ; attempt++ {
		detail, retry, err := rt.forwardOnce(ctx, x, body, key, secret)
		if err == nil {
			if attempt > 0 {
				detail += fmt.Sprintf(" after %d retries", attempt)
			}
			return detail, nil
		}
		if !retry || attempt >= x.Retries || ctx.Err() != nil {
			if attempt > 0 {
				detail += fmt.Sprintf(" (after %d retries)", attempt)
			}
			return detail, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return "cancelled", ctx.Err()
		}
		wait *= 2
	}
}

var errExternalForward = errors.New("forward failed")

func (rt *Runtime) forwardOnce(ctx context.Context, x externalSettings, body []byte, key string, secret []byte) (detail string, retry bool, err error) {
	limit := x.timeout()
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, x.InputURL, bytes.NewReader(body))
	if err != nil {
		return "bad inputUrl: " + err.Error(), false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "jarvis-service/"+rt.env.Version)
	req.Header.Set("Idempotency-Key", key)
	if secret != nil {
		webhook.SetHeaders(req.Header, secret, key, body, rt.env.Now())
	}
	resp, err := rt.hc.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return "cancelled", false, ctx.Err()
		case actx.Err() != nil:
			return fmt.Sprintf("inputUrl did not answer within %s", limit), false, fmt.Errorf("%w: timeout", errExternalForward)
		case errors.Is(err, syscall.ECONNREFUSED):
			return "could not reach inputUrl: connection refused", true, fmt.Errorf("%w: %v", errExternalForward, err)
		}
		return "could not reach inputUrl: " + externalNetError(err), false, fmt.Errorf("%w: %v", errExternalForward, err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return fmt.Sprintf("HTTP %d", resp.StatusCode), false, nil
	}
	detail = fmt.Sprintf("inputUrl answered HTTP %d", resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		detail += " (a redirect: redirects are not followed; put the final URL in external.inputUrl)"
	}
	if t := strings.TrimSpace(turn.Snippet(strings.ToValidUTF8(string(head), ""))); t != "" {
		detail += ": " + t
	}
	return detail, resp.StatusCode >= 500, fmt.Errorf("%w: HTTP %d", errExternalForward, resp.StatusCode)
}

// externalNetError drops the request URL (and so any query) from a client error.
func externalNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// externalSecret resolves the agent's webhook secret.
func (rt *Runtime) externalSecret(x externalSettings) ([]byte, error) {
	if rt.env.Secrets == nil {
		return nil, fmt.Errorf("secret %q is unavailable: the service has no secret store", x.SecretRef)
	}
	v, err := rt.env.Secrets.Get(x.SecretRef)
	if err != nil || v == "" {
		return nil, fmt.Errorf("secret %q is unavailable", x.SecretRef)
	}
	key, err := webhook.Key(v)
	if err != nil {
		return nil, fmt.Errorf("secret %q: %w", x.SecretRef, err)
	}
	return key, nil
}

// Status is an external agent's entry status for GET /v1/agents.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	x, err := rt.externalSettings(a)
	if err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	st, err := rt.env.Store.ExternalAgentStatus(context.Background(), a.AgentID)
	if err != nil {
		return api.AgentStatus{State: "unknown", Detail: "status unavailable: " + err.Error()}
	}
	ext := &api.ExternalAgentStatus{LastForwardAt: st.LastForwardAt, LastForwardOK: st.LastForwardOK,
		LastForwardResult: st.LastForwardDetail, LastCallbackAt: st.LastCallbackAt, CallbackAuth: x.authLabel()}
	out := api.AgentStatus{State: "unknown", Detail: "no message forwarded yet", At: st.LastForwardAt, External: ext}
	switch {
	case st.LastForwardAt == "":
	case st.LastForwardOK:
		out.State, out.Detail = "ok", "last forward accepted ("+st.LastForwardDetail+")"
	default:
		out.State, out.Detail = "failing", "last forward failed: "+st.LastForwardDetail
	}
	return out
}

// New returns the external runtime: base is the service's own address (for
// callback URLs), red the redactor of what agents may echo.
func New(env turn.Env, base *callback.Base, red *redact.Set) *Runtime {
	rt := &Runtime{env: env, red: red, base: base, replays: &callback.Replays{Store: env.Store, Now: env.Now}}
	rt.settings.Raw = func(a config.Agent) json.RawMessage { return a.External }
	rt.settings.Parse = parseExternalSettings
	// Every connection to an inputUrl passes the one address check at
	// connect time (a name rebound to a metadata address is refused).
	rt.hc = netguard.Client(rt.env.HTTPClient)
	return rt
}

// Load parses and validates an external agent's settings when its
// configuration is loaded or reloaded, and logs what cannot run.
func (rt *Runtime) Load(a config.Agent) {
	x, err := rt.externalSettings(a)
	if err != nil {
		rt.env.Log.Warn("external agent is not usable", "agent", a.AgentID, "err", err)
	} else if x.CallbackAuth == externalAuthNone {
		rt.env.Log.Warn("external agent accepts unauthenticated callbacks (callbackAuth \"none\"): anything that can reach the service can post as this agent", "agent", a.AgentID)
	}
}

// Outbound says where a message to an external agent goes.
func (rt *Runtime) Outbound(_ *config.Config, target config.Agent) string {
	where := ""
	if x, err := rt.externalSettings(target); err == nil {
		where = " at " + x.InputURL
	}
	return fmt.Sprintf("external agent %q%s (another program, possibly another machine)", target.AgentID, where)
}

// AwaitReply waits for the first reply an external agent posts
// to a session after the user message of a turn (the delegated one) and
// returns its text; that turn's failure (an error event) ends the wait with
// that error, and ctx bounds it. For agents_message in sync mode.
func (rt *Runtime) AwaitReply(ctx context.Context, sessionID, turnID string) (string, error) {
	seq, err := rt.env.Store.ExternalTurnStartSeq(ctx, sessionID, turnID)
	if err != nil {
		return "", err
	}
	return rt.waitExternal(ctx, sessionID, seq, turnID)
}

func (rt *Runtime) waitExternal(ctx context.Context, sessionID string, afterSeq int64, turnID string) (string, error) {
	var reply string
	var failure error
	err := rt.env.Events.Follow(ctx, sessionID, afterSeq, events.FollowOptions{}, func(ev events.Event) error {
		switch ev.Type {
		case api.EventFinal:
			var d api.ExternalReplyEvent
			if json.Unmarshal(ev.Data, &d) == nil && d.Origin == api.EventOriginExternal {
				reply = d.Text
				return events.ErrStop
			}
		case api.EventError:
			var d api.ErrorEvent
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return fmt.Errorf("external agent: reading an error event: %w", err)
			}
			if turnID != "" && d.TurnID != turnID {
				return nil
			}
			failure = fmt.Errorf("external agent: %s: %s", d.Code, d.Message)
			return events.ErrStop
		}
		return nil
	})
	if failure != nil {
		return "", failure
	}
	if err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return reply, nil
}

// handleExternalSessionInfo is GET /v1/external/sessions/{sessionId}: the
// callback URL of an external session, for scripts and for people who want
// to post a reply by hand (docs/protocols/external-agents.md's curl example).
func (rt *Runtime) handleExternalSessionInfo(w http.ResponseWriter, r *http.Request) error {
	sess, err := httpapi.LiveSession(r.Context(), rt.env.Store, r.PathValue("sessionId"), "sessionId")
	if err != nil {
		return err
	}
	agent, ok := rt.env.Config().Agent(sess.AgentID)
	if !ok || agent.Type != config.TypeExternal {
		return httpapi.Errorf(http.StatusNotFound, "not_external_session", "session %q does not belong to an external agent", sess.ID)
	}
	x, err := rt.externalSettings(agent)
	if err != nil {
		return httpapi.Errorf(http.StatusServiceUnavailable, "external_not_configured", "%s", err.Error())
	}
	cb, err := rt.externalCallbackURL(r.Context(), x, sess.ID)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.ExternalSessionInfo{SessionID: sess.ID, AgentID: agent.AgentID, InputURL: x.InputURL, CallbackURL: cb})
}

// Validate says why an external agent cannot run: its settings are invalid.
func (rt *Runtime) Validate(a config.Agent) error {
	_, err := rt.externalSettings(a)
	return err
}

// Routes are the external agents' own routes: the callback agents post
// their replies to, and the callback URL of a session for scripts.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "POST /external/sessions/{sessionId}/messages", Handle: rt.handleExternalMessage},
		{Pattern: "GET /v1/external/sessions/{sessionId}", Handle: rt.handleExternalSessionInfo},
	}
}
