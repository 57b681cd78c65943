package proxyrt

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/proxy"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/webhook"
)

// handleProxyCallback is POST /proxy/agents/{agentId}/sessions/{sessionId}/callback:
// an async proxy agent posts Agent Protocol responses for a call here. It
// authenticates with the per-session token of the URL (?token=), or a
// Standard Webhooks signature when the agent has webhookSecretRef, or not at
// all with callbackAuth "none". Answers: 202 with api.ProxyCallbackResponse;
// 401 bad or missing token/signature; 404 unknown agent or session; 400
// malformed response (the waiting turn fails with proxy_malformed); 413 over
// the size cap (proxy_too_large); 409 the call's answer is already complete.
func (rt *Runtime) handleProxyCallback(w http.ResponseWriter, r *http.Request) error {
	agentID, sessionID, callID := r.PathValue("agentId"), r.PathValue("sessionId"), r.URL.Query().Get("call")
	agent, ok := rt.env.Config().Agent(agentID)
	if !ok || agent.Type != config.TypeProxy {
		return httpapi.Errorf(http.StatusNotFound, "unknown_agent", "no proxy agent %q is configured", agentID)
	}
	pc, err := rt.definition(agent)
	if err != nil {
		return httpapi.Errorf(http.StatusConflict, "proxy_invalid", "%v", err)
	}
	limit := pc.MaxResponseBytes
	if limit <= 0 {
		limit = proxy.DefaultMaxResponse
	}
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	ok, dup, given, err := rt.authenticate(r, pc, agentID, sessionID, callID, body, rt.env.Secrets, rt.env.Now())
	switch {
	case err != nil:
		return err
	case !ok:
		return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "callback token or webhook signature missing, wrong or expired")
	case dup: // Standard Webhooks: a replayed id is acknowledged and ignored
		return httpapi.WriteJSON(w, http.StatusOK, api.ProxyCallbackResponse{Duplicate: true})
	case !given:
		return httpapi.Errorf(http.StatusNotFound, "proxy_call_not_found", "agent %q was given no call %q in session %q", agentID, callID, sessionID)
	}
	wt := rt.lookup(callID, agentID, sessionID)
	if wt == nil || !wt.test {
		if sess, err := rt.env.Store.Session(r.Context(), sessionID); errors.Is(err, store.ErrNotFound) || err == nil && sess.DeletedAt != "" {
			return httpapi.Errorf(http.StatusNotFound, "not_found", "no session %s", sessionID)
		} else if err != nil {
			return err
		}
	}
	if readErr != nil {
		var mbe *http.MaxBytesError
		if errors.As(readErr, &mbe) {
			e := &proxy.TooLargeError{Limit: limit}
			wt.failWith(e)
			return httpapi.Errorf(http.StatusRequestEntityTooLarge, "proxy_too_large", "%v", e).With("limit_bytes", limit)
		}
		return httpapi.Errorf(http.StatusBadRequest, "bad_request", "reading the callback body: %v", readErr)
	}
	resp, err := proxy.ParseCallback(body, pc.ResponseMapping)
	if err != nil {
		wt.failWith(err)
		return httpapi.Errorf(http.StatusBadRequest, proxyErrorCode(err), "%v", err)
	}
	out, err := rt.deliverProxy(wt, agent, pc, sessionID, resp)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusAccepted, out)
}

// failWith fails a waiting call (a malformed or oversized callback).
func (w *proxyWait) failWith(err error) {
	if w == nil || w.test {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.late.Load() {
		select {
		case w.fail <- err:
		default:
		}
	}
}

// deliverProxy adds a callback's response to its call: shown at once while
// the call waits, recorded as a late answer once it has timed out.
func (rt *Runtime) deliverProxy(w *proxyWait, agent config.Agent, pc proxyConfig, sessionID string, resp proxy.Response) (api.ProxyCallbackResponse, error) {
	if w == nil { // no call we know of (e.g. sent before a restart)
		if resp.Final {
			rt.recordLate(nil, agent, pc, sessionID, resp)
		}
		return api.ProxyCallbackResponse{Accepted: true, Late: true, Final: resp.Final}, nil
	}
	if w.test {
		return api.ProxyCallbackResponse{Accepted: true, Final: resp.Final}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	shown, err := w.turn.Add(resp)
	if errors.Is(err, proxy.ErrTurnClosed) {
		return api.ProxyCallbackResponse{}, httpapi.Errorf(http.StatusConflict, "proxy_turn_complete", "the answer to call %s is already complete", w.id)
	}
	if w.late.Load() {
		if shown.Final {
			rt.recordLate(w, agent, pc, sessionID, shown)
		}
		return api.ProxyCallbackResponse{Accepted: true, Late: true, Final: shown.Final}, nil
	}
	rt.noteStatus(agent.AgentID, resp.Status, rt.env.Now())
	if !shown.Final {
		w.sink.delta(shown.Output)
	}
	w.sink.thoughts(resp.Thoughts)
	w.sink.agentStatus(resp.Status)
	if shown.Final {
		w.final <- shown // buffered; only one Add returns the final response
	}
	return api.ProxyCallbackResponse{Accepted: true, Final: shown.Final}, nil
}

// authenticate checks a callback. ok: the per-call token of the URL (for
// this agent, session and call, not expired), else a Standard Webhooks
// signature (dup: a replayed webhook-id), else callbackAuth "none". given:
// the callback is for a call the agent was given, or (signed only) for a
// session of the agent with no call named (recorded as a late answer); an
// unauthenticated callback must name a call the agent was given.
func (rt *Runtime) authenticate(r *http.Request, pc proxyConfig, agentID, sessionID, callID string, body []byte, secrets turn.Secrets, now time.Time) (ok, dup, given bool, err error) {
	ctx := r.Context()
	if tok := r.URL.Query().Get("token"); tok != "" {
		c, err := rt.env.Store.ProxyCallToken(ctx, callback.HashToken(tok))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, false, false, err
		}
		if err == nil && c.AgentID == agentID && c.SessionID == sessionID && c.CallID == callID {
			return true, false, true, nil
		}
	}
	callGiven := func() (bool, error) {
		if callID == "" {
			return false, nil
		}
		return rt.env.Store.ProxyCallGiven(ctx, agentID, sessionID, callID)
	}
	if pc.WebhookSecretRef != "" && secrets != nil && webhook.Signed(r.Header) {
		if sec, err := secrets.Get(pc.WebhookSecretRef); err == nil {
			if key, err := webhook.Key(sec); err == nil {
				if id, err := webhook.Verify(key, r.Header, body, now); err == nil {
					g, err := callGiven()
					if err == nil && !g && callID == "" {
						g, err = rt.ownSession(ctx, agentID, sessionID)
					}
					if err != nil {
						return true, false, g, err
					}
					dup, err := rt.replays.Claim(ctx, callback.ProxyScope(agentID), id)
					return true, dup, g, err
				}
			}
		}
	}
	if pc.CallbackAuth == "none" {
		g, err := callGiven()
		return true, false, g, err
	}
	return false, false, false, nil
}

// ownSession reports whether sessionID is a live session of the agent.
func (rt *Runtime) ownSession(ctx context.Context, agentID, sessionID string) (bool, error) {
	sess, err := rt.env.Store.Session(ctx, sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && sess.DeletedAt == "" && sess.AgentID == agentID, err
}

// handleProxyTest is POST /v1/agents/{agentId}/test: it sends the proxy
// agent a real request with the sample values and reports what came back
// (api.ProxyTestReport). A failing agent is a 200 with the failure in the
// report; only an unknown agent or one that is not a proxy is an error.
func (rt *Runtime) handleProxyTest(w http.ResponseWriter, r *http.Request) error {
	agentID := r.PathValue("agentId")
	agent, ok := rt.env.Config().Agent(agentID)
	if !ok {
		return httpapi.Errorf(http.StatusNotFound, "unknown_agent", "no agent %q is configured", agentID)
	}
	if agent.Type != config.TypeProxy {
		return httpapi.Errorf(http.StatusBadRequest, "not_a_proxy_agent", "agent %q is of type %q; only proxy agents have a Test action", agentID, agent.Type)
	}
	var req api.ProxyTestRequest
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
			return err
		}
	}
	pc, err := rt.definition(agent)
	if err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "proxy_invalid", "%v", err)
	}
	if req.Text == "" {
		req.Text = "Hello from Jarvis: this is a test message."
	}
	if req.SessionID == "" {
		req.SessionID = turn.NewID("test_")
	}
	if req.UserID == "" {
		req.UserID = rt.userID
	}
	in := proxy.Input{SessionID: req.SessionID, UserID: req.UserID, Text: req.Text}
	if pc.Async {
		// Callbacks of a test call are acknowledged and dropped: they must
		// not land in a real session's transcript.
		tw := &proxyWait{id: turn.NewID("pc_"), agentID: agentID, sessionID: req.SessionID, test: true, created: time.Now()}
		tw.late.Store(true)
		if in.CallbackURL = rt.callbackURL(pc, agentID, req.SessionID, tw.id); in.CallbackURL != "" {
			rt.register(tw)
		}
	}
	rep := rt.client.Test(r.Context(), pc.Definition, in)
	// The agent's answer and the error may echo the credentials sent.
	return httpapi.WriteJSON(w, http.StatusOK, redact.JSON(rt.red, api.ProxyTestReport{
		Status: rep.Status, LatencyMs: rep.LatencyMs, ContentType: rep.ContentType, RequestBody: rep.RequestBody,
		RawResponse: rep.RawResponse, RawTruncated: rep.RawTruncated, Parsed: rep.Parsed, ParseError: rep.ParseError,
		Error: rep.Error, ErrorKind: rep.ErrorKind, Output: rep.Output, Thoughts: rep.Thoughts, AgentStatus: rep.AgentStatus,
		Chunks: rep.Chunks, Pending: rep.Pending, CallbackURL: in.CallbackURL,
	}))
}
