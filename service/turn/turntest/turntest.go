// Package turntest holds what the tests of runtime packages share: a
// turn.Publisher that records what a runtime published, so a runtime is
// tested against a real store and this publisher, without the service.
package turntest

import (
	"encoding/json"
	"strings"
	"sync"
)

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
