package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tmaxmax/go-sse"

	"jarvis/service/events"
)

// FuzzWriteEvent: whatever an event's type and text, the stream written by
// writeEvent parses back as exactly one event with the same id, type and
// data: no newline in a type or in data can inject an id:, event: or a
// second event. A type that cannot be written safely is refused.
func FuzzWriteEvent(f *testing.F) {
	for _, s := range [][2]string{
		{"assistant.delta", "hello"},
		{"assistant.final", "line1\nline2\r\nline3\rend"},
		{"error\nid: 999", "x\n\nid: 7\nevent: tool.request\ndata: {}"},
		{"tool.request\r\nevent: x", "data: injected"},
		{"", "\x00"},
		{"status", "\u2028\u2029 \x85"},
	} {
		f.Add(s[0], s[1], int64(42))
	}
	f.Fuzz(func(t *testing.T, typ, text string, seq int64) {
		if seq < 0 {
			seq = -seq
		}
		// Event data is JSON made by the service (json.Marshal), as in s.publish.
		data, _ := json.Marshal(map[string]string{"text": text})
		rec := httptest.NewRecorder()
		sw, err := sse.Upgrade(rec, httptest.NewRequest("GET", "/v1/stream", nil))
		if err != nil {
			t.Fatal(err)
		}
		err = writeEvent(sw, events.Event{Seq: seq, Type: typ, Data: data})
		if err != nil {
			if _, terr := sse.NewType(typ); terr == nil {
				t.Fatalf("writeEvent refused a valid type %q: %v", typ, err)
			}
			return
		}
		sw.Flush()
		var got []sse.Event
		for ev, err := range sse.Read(strings.NewReader(rec.Body.String()), nil) {
			if err != nil {
				t.Fatalf("unparsable stream %q: %v", rec.Body.String(), err)
			}
			got = append(got, ev)
		}
		if len(got) != 1 {
			t.Fatalf("%d events parsed from %q", len(got), rec.Body.String())
		}
		ev := got[0]
		if ev.LastEventID != strconv.FormatInt(seq, 10) || ev.Type != typ || ev.Data != string(data) {
			t.Fatalf("wrote id %d type %q data %s; parsed id %q type %q data %q", seq, typ, data, ev.LastEventID, ev.Type, ev.Data)
		}
	})
}
