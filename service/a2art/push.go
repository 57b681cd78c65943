package a2art

// A2A push notifications received through the callback machinery: when the
// agent's card says capabilities.pushNotifications, each turn's message
// carries a pushNotificationConfig naming Jarvis's push route (POST
// /a2a/push on the loopback service) with a token minted for that turn
// (service/callback: only its hash is kept; ended with the turn). A
// delivery (the whole task, as a2a-go's push sender posts it, the token in
// X-A2A-Notification-Token) is verified by its token and taken once: the
// same task state delivered again is answered as a duplicate and changes
// nothing. The turn reads deliveries while it waits for its task's end, so
// a task that finished while the agent could not be reached (its stream
// broken, tasks/get failing) still ends the turn.

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"jarvis/service/callback"
	"jarvis/service/httpapi"
	"jarvis/service/turn"
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
	ch   chan *a2a.Task
	mu   sync.Mutex
	seen map[string]bool // deliveries taken: task, state, time, artifacts
}

// pushFor returns the push configuration of a turn and its mailbox when the
// card offers push notifications and the service's address is known; end
// revokes its token. All nil otherwise.
func (rt *Runtime) pushFor(card *a2a.AgentCard) (*a2a.PushConfig, *pushWait, func()) {
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
	w := &pushWait{ch: make(chan *a2a.Task, 16), seen: map[string]bool{}}
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
	return &a2a.PushConfig{URL: strings.TrimSuffix(base, "/") + PushPath, Token: tok}, w, end
}

// Routes is the push route.
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{{Pattern: "POST " + PushPath, Handle: rt.handlePush}}
}

// handlePush is POST /a2a/push: one delivery, verified by its token.
func (rt *Runtime) handlePush(w http.ResponseWriter, r *http.Request) error {
	max := rt.env.Config().MaxBodyBytes
	if r.ContentLength > max {
		return httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over %d bytes", max)
	}
	tok := r.Header.Get(tokenHeader)
	rt.push.mu.Lock()
	pw := rt.push.byHash[callback.HashToken(tok)]
	rt.push.mu.Unlock()
	if tok == "" || pw == nil {
		return httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong push notification token (or its turn has ended)")
	}
	var task a2a.Task
	if err := httpapi.DecodeJSON(w, r, &task, max); err != nil {
		return err
	}
	if task.ID == "" {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "the delivery is not a task: it has no id").With("field", "id")
	}
	key := fmt.Sprintf("%s|%s|%v|%d", task.ID, task.Status.State, task.Status.Timestamp, len(task.Artifacts))
	pw.mu.Lock()
	dup := pw.seen[key]
	pw.seen[key] = true
	pw.mu.Unlock()
	if dup {
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "duplicate": true})
	}
	select {
	case pw.ch <- &task:
	default:
		// The turn is not reading (its mailbox is full): it polls the task anyway.
		rt.env.Log.Info("a2a: a push delivery was dropped: the turn's mailbox is full", "task", task.ID)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}
