package a2art

// A2A push notifications received through the callback machinery: when the
// agent's card says capabilities.pushNotifications, each turn's message
// carries a pushNotificationConfig naming Jarvis's push route (POST
// /a2a/push on the loopback service) with a token minted for that turn
// (service/callback: only its hash is kept; ended with the turn). A
// delivery (the whole task, as a2a-go's push sender posts it, the token in
// X-A2A-Notification-Token) is verified by its token, or by a Standard
// Webhooks signature with the agent's webhookSecretRef (package webhook,
// the one verifier of the external and proxy agents' callbacks), and taken
// once: the same task state delivered again, or a signed delivery whose
// webhook-id was taken before (callback.Replays, kept in the store), is
// answered as a duplicate and changes nothing. A signed delivery must
// verify even when it carries a good token. The turn reads deliveries
// while it waits for its task's end, so a task that finished while the
// agent could not be reached (its stream broken, tasks/get failing) still
// ends the turn.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/turn"
	"jarvis/service/webhook"
)

// PushPath is the route A2A agents post their push notifications to. It is
// outside /v1/: an agent never gets the service's token, only its turn's.
const PushPath = "/a2a/push"

// tokenHeader is where a2a-go's push sender puts the notification token.
const tokenHeader = "X-A2A-Notification-Token"

// pushes are the turns waiting for push deliveries, by token hash.
type pushes struct {
	mu     sync.Mutex
	byHash map[string]*pushWait
}

// pushWait is one turn's mailbox of delivered tasks.
type pushWait struct {
	agent string // the agent the turn talks to
	ch    chan *a2a.Task
	mu    sync.Mutex
	seen  map[string]bool // deliveries taken: task, state, time, artifacts
}

// pushFor returns the push configuration of a turn and its mailbox when the
// card offers push notifications and the service's address is known; end
// revokes its token. All nil otherwise.
func (rt *Runtime) pushFor(agentID string, card *a2a.AgentCard) (*a2a.PushConfig, *pushWait, func()) {
	if !card.Capabilities.PushNotifications || rt.env.BaseURL == nil {
		return nil, nil, func() {}
	}
	base := rt.env.BaseURL()
	if base == "" {
		return nil, nil, func() {}
	}
	tok, hash, err := callback.NewToken("ja2a_")
	if err != nil {
		rt.env.Log.Error("a2a: mint a push token", "err", err)
		return nil, nil, func() {}
	}
	w := &pushWait{agent: agentID, ch: make(chan *a2a.Task, 16), seen: map[string]bool{}}
	rt.push.mu.Lock()
	if rt.push.byHash == nil {
		rt.push.byHash = map[string]*pushWait{}
	}
	rt.push.byHash[hash] = w
	rt.push.mu.Unlock()
	end := func() {
		rt.push.mu.Lock()
		delete(rt.push.byHash, hash)
		rt.push.mu.Unlock()
	}
	// The agent's id in the URL finds its secret for a delivery signed
	// without the token.
	u := strings.TrimSuffix(base, "/") + PushPath + "?agent=" + url.QueryEscape(agentID)
	return &a2a.PushConfig{URL: u, Token: tok}, w, end
}

// Routes is the push route.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{{Pattern: "POST " + PushPath, Handle: rt.handlePush}}
}

// handlePush is POST /a2a/push: one delivery, verified by its token or its
// signature.
func (rt *Runtime) handlePush(w http.ResponseWriter, r *http.Request) error {
	max := rt.env.Config().MaxBodyBytes
	if r.ContentLength > max {
		return httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over %d bytes", max)
	}
	tok := r.Header.Get(tokenHeader)
	var pw *pushWait
	if tok != "" {
		rt.push.mu.Lock()
		pw = rt.push.byHash[callback.HashToken(tok)]
		rt.push.mu.Unlock()
	}
	signed := webhook.Signed(r.Header)
	// Without a signature the token is the check, before the body is read.
	if !signed && pw == nil {
		return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong push notification token (or its turn has ended)")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over %d bytes", max)
		}
		return err
	}
	agentID := r.URL.Query().Get("agent")
	if pw != nil {
		agentID = pw.agent
	}
	if signed {
		id, err := rt.verifyPush(agentID, r.Header, body)
		if err != nil {
			rt.env.Log.Info("a2a: a push delivery was refused", "agent", agentID, "err", err)
			return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "%s", err.Error())
		}
		dup, err := rt.replays.Claim(r.Context(), pushScope(agentID), id)
		if err != nil {
			return err
		}
		if dup {
			return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "duplicate": true})
		}
	}
	var task a2a.Task
	if err := json.Unmarshal(body, &task); err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_json", "the delivery is not JSON: %v", err)
	}
	if task.ID == "" {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "the delivery is not a task: it has no id").With("field", "id")
	}
	waits := []*pushWait{pw}
	if pw == nil { // signed without the token: every turn with this agent looks (each keeps only its task)
		waits = rt.waitsOf(agentID)
		if len(waits) == 0 {
			return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "no turn with agent %q is waiting for push notifications (it has ended)", agentID)
		}
	}
	key := fmt.Sprintf("%s|%s|%v|%d", task.ID, task.Status.State, task.Status.Timestamp, len(task.Artifacts))
	taken := false
	for _, pw := range waits {
		pw.mu.Lock()
		dup := pw.seen[key]
		pw.seen[key] = true
		pw.mu.Unlock()
		if dup {
			continue
		}
		taken = true
		select {
		case pw.ch <- &task:
		default:
			// The turn is not reading (its mailbox is full): it polls the task anyway.
			rt.env.Log.Info("a2a: a push delivery was dropped: the turn's mailbox is full", "task", task.ID)
		}
	}
	if !taken {
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "duplicate": true})
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// pushScope is the replay scope of an A2A agent's signed deliveries.
func pushScope(agentID string) string { return "a2a:" + agentID }

// verifyPush checks a signed delivery against the agent's webhook secret
// and returns its webhook-id. The error says why, in words for the 401.
func (rt *Runtime) verifyPush(agentID string, h http.Header, body []byte) (string, error) {
	agent, ok := rt.env.Config().Agent(agentID)
	if !ok || agent.Type != config.TypeA2A {
		return "", fmt.Errorf("the delivery is signed, and %q is not an A2A agent here", agentID)
	}
	x, err := rt.settings.Get(agent)
	if err != nil {
		return "", err
	}
	if x.WebhookSecretRef == "" {
		return "", fmt.Errorf("the delivery is signed, and agent %q has no webhook secret to check it with", agentID)
	}
	if rt.env.Secrets == nil {
		return "", fmt.Errorf("agent %q's webhook secret is in the keyring, and there is no keyring here", agentID)
	}
	sec, err := rt.env.Secrets.Get(x.WebhookSecretRef)
	if err != nil || sec == "" {
		return "", fmt.Errorf("agent %q's webhook secret could not be read from the keyring", agentID)
	}
	key, err := webhook.Key(sec)
	if err != nil {
		return "", fmt.Errorf("agent %q's webhook secret: %w", agentID, err)
	}
	return webhook.Verify(key, h, body, rt.env.Now())
}

// waitsOf returns the turns waiting for pushes from agentID.
func (rt *Runtime) waitsOf(agentID string) []*pushWait {
	rt.push.mu.Lock()
	defer rt.push.mu.Unlock()
	var out []*pushWait
	for _, w := range rt.push.byHash {
		if w.agent == agentID {
			out = append(out, w)
		}
	}
	return out
}
