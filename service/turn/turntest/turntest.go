// Package turntest holds what the tests of runtime packages share: a
// turn.Publisher that records what a runtime published, an environment over
// a real store and event hub (Env), and a turn started as the service's
// turn lifecycle starts one (Begin), so a runtime is tested without the
// service.
package turntest

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// Env is a runtime's environment: a real store (a SQLite file in dir) and
// event hub, closed when the test ends, configuration cfg, and a Recorder
// as its publisher.
func Env(tb testing.TB, dir string, cfg *config.Config) (turn.Env, *Recorder) {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "jarvis.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	hub := events.New(st, events.Options{})
	tb.Cleanup(func() { hub.Close(); st.Close() })
	rec := &Recorder{}
	return turn.Env{Store: st, Publisher: rec, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler), Now: time.Now,
		Events: hub, DataDir: dir}, rec
}

// Begin stores text as the user's message of a new turn in a new session
// of agentID, with its user.message event, as the service does before a
// runtime runs the turn.
func Begin(tb testing.TB, env turn.Env, agentID, text string) (*turn.Turn, store.Session) {
	tb.Helper()
	ctx := context.Background()
	sess, err := env.Store.CreateSession(ctx, store.Session{ID: turn.NewID("g_"), AgentID: agentID})
	if err != nil {
		tb.Fatal(err)
	}
	t := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: store.Message{SessionID: sess.ID, Role: "user", Content: text}}
	seq, err := env.Events.PublishWith(ctx, sess.ID, api.EventUserMessage, api.TextEvent{Text: text, TurnID: t.ID}, env.Store.StartTurn(t.ID, "", &t.User, turn.Snippet(text)))
	if err != nil {
		tb.Fatal(err)
	}
	t.Stored = func() (int64, error) { return seq, nil }
	return t, sess
}

// Event is one published event.
type Event struct {
	SessionID, Type string
	Data            json.RawMessage
}

// Recorder is a turn.Publisher that keeps every event. Safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Publish records the event; data that cannot be encoded fails loudly,
// as the service's own publisher would refuse it.
func (r *Recorder) Publish(sessionID, typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic("turntest: unencodable event data: " + err.Error())
	}
	r.mu.Lock()
	r.events = append(r.events, Event{SessionID: sessionID, Type: typ, Data: b})
	r.mu.Unlock()
}

// Events returns what was published so far, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Lines returns "type value" for each event, value being the string field
// of its data named field ("text", "kind"), or "type" alone when it has none.
func (r *Recorder) Lines(field string) []string {
	var out []string
	for _, ev := range r.Events() {
		var m map[string]any
		json.Unmarshal(ev.Data, &m) // data that is not an object has no field
		v, _ := m[field].(string)
		out = append(out, strings.TrimSpace(ev.Type+" "+v))
	}
	return out
}

// First returns the data of the first event of type typ so far, or false.
func (r *Recorder) First(typ string) (json.RawMessage, bool) {
	for _, ev := range r.Events() {
		if ev.Type == typ {
			return ev.Data, true
		}
	}
	return nil, false
}
