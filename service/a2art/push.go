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
// ends the turn. A turn that ended with its task unfinished (it timed out,
// or lost the agent) keeps its mailbox for lateWindow: the task's end
// delivered then is kept in the conversation and becomes one Inbox item
// (an answer that arrived while you were away), and the token is revoked.
// The task is kept in the store as well, so that its answer is not lost
// when Jarvis stops first: FollowLate (late.go) reads it with tasks/get.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/store"
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

// lateWindow is how long after its turn ended a task left unfinished may
// still bring its answer by push notification.
const lateWindow = 24 * time.Hour

// pushWait is one turn's mailbox of delivered tasks.
type pushWait struct {
	agent string // the agent the turn talks to
	ch    chan *a2a.Task
	mu    sync.Mutex
	seen  map[string]bool // deliveries taken: task, state, time, artifacts
	// late takes the deliveries once the turn has ended (awaitLate).
	late func(ctx context.Context, t *a2a.Task)
}

// awaitLate keeps the mailbox of a turn that ended with its task
// unfinished open for lateWindow (then end revokes its token): the task's
// end delivered meanwhile is its late answer (lateAnswer), and ends it.
func (rt *Runtime) awaitLate(pw *pushWait, end func(), agent config.Agent, sessionID string, taskID a2a.TaskID) {
	rt.keepLate(agent.AgentID, sessionID, taskID)
	timer := time.AfterFunc(lateWindow, end)
	var once sync.Once
	pw.mu.Lock()
	pw.late = func(ctx context.Context, t *a2a.Task) {
		if t.ID != taskID || !(t.Status.State.Terminal() || t.Status.State == a2a.TaskStateInputRequired) {
			return
		}
		once.Do(func() {
			timer.Stop()
			end()
			rt.lateAnswer(ctx, agent, sessionID, t)
		})
	}
	pw.mu.Unlock()
}

// lateAnswer keeps a task's answer that came after its turn in the
// conversation (an assistant message of its own) and puts it in the Inbox,
// once: by whoever takes the task's record first (a push delivery or
// FollowLate's tasks/get).
func (rt *Runtime) lateAnswer(ctx context.Context, agent config.Agent, sessionID string, t *a2a.Task) {
	if took, err := rt.env.Store.TakeLateTask(context.WithoutCancel(ctx), agent.AgentID, string(t.ID)); err != nil || !took {
		if err != nil {
			rt.env.Log.Error("a2a: taking a late answer", "agent", agent.AgentID, "task", t.ID, "err", err)
		}
		return
	}
	var b strings.Builder
	for _, a := range t.Artifacts {
		b.WriteString(partsText(a.Parts))
	}
	if b.Len() == 0 && t.Status.Message != nil {
		b.WriteString(partsText(t.Status.Message.Parts))
	}
	text := b.String()
	if t.Status.State != a2a.TaskStateCompleted && t.Status.State != a2a.TaskStateInputRequired || strings.TrimSpace(text) == "" {
		rt.env.Log.Info("a2a: a task ended after its turn, with no answer", "agent", agent.AgentID, "task", t.ID, "state", t.Status.State)
		return
	}
	ctx = context.WithoutCancel(ctx)
	var m meta
	m.A2A.ContextID, m.A2A.TaskID, m.A2A.State = t.ContextID, string(t.ID), string(t.Status.State)
	mb, _ := json.Marshal(m)
	id := turn.NewID("a2l_")
	msg := &store.Message{SessionID: sessionID, TurnID: id, Role: "assistant", Content: text, Meta: string(mb)}
	if _, err := rt.env.Events.PublishWith(ctx, sessionID, api.EventFinal,
		api.ExternalReplyEvent{Text: text, TurnID: id, Origin: lateOrigin, AgentID: agent.AgentID}, rt.env.Store.AppendMessage(msg)); err != nil {
		rt.env.Log.Error("a2a: keeping a late answer", "agent", agent.AgentID, "task", t.ID, "err", err)
		return
	}
	rt.env.AnswerArrived(ctx, agent, sessionID, "", text, "a2a", agent.AgentID, sessionID, string(t.ID), string(t.Status.State))
}

// lateOrigin is the origin of the assistant.final of a late answer.
const lateOrigin = "a2a"

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
		late := pw.late
		pw.mu.Unlock()
		if dup {
			continue
		}
		taken = true
		if late != nil { // its turn has ended: a late answer
			late(r.Context(), &task)
			continue
		}
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
