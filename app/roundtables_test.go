package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
)

// A reloaded transcript carries the session's round tables, read back from
// the service, so the window can lay their cards out again.
func TestReloadReadsTheSessionsRoundtables(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/sessions/g_1/messages":
			w.Write([]byte(`{"messages":[{"id":1,"role":"user","text":"review","turnId":"t1","createdAt":"2026-01-01T10:00:00Z"},` +
				`{"id":2,"role":"assistant","text":"# Result","turnId":"t1","meta":{"roundtable_run_id":"rt_old"},"createdAt":"2026-01-01T10:01:00Z"}],"lastEventId":9}`))
		case "/v1/roundtables":
			if r.URL.Query().Get("general_session_id") != "g_1" || r.URL.Query().Get("limit") != "500" {
				t.Errorf("list query %q", r.URL.RawQuery)
			}
			// Newest first, without result or Markdown.
			w.Write([]byte(`{"runs":[` +
				`{"id":"rt_live","general_session_id":"g_1","turn_id":"t3","source":"agent","status":"running","participants":["a","b"],"created_at":"2026-01-01T10:03:00Z","task":{}},` +
				`{"id":"rt_gone","general_session_id":"g_1","turn_id":"t2","source":"tool","status":"completed","participants":["a"],"created_at":"2026-01-01T10:02:00Z","task":{}},` +
				`{"id":"rt_old","general_session_id":"g_1","turn_id":"t1","source":"agent","status":"completed","participants":["a","b"],"created_at":"2026-01-01T10:00:30Z","task":{}}]}`))
		case "/v1/roundtables/rt_old":
			w.Write([]byte(`{"id":"rt_old","general_session_id":"g_1","turn_id":"t1","source":"agent","status":"completed","outcome":"approved","summary":"2 of 2",` +
				`"participants":["a","b"],"created_at":"2026-01-01T10:00:30Z","task":{},"answers":[{"seq":1,"agent":"a","phase":"analyze","kind":"analysis","data":{"big":"x"}}],` +
				`"result":{"outcome":"approved","votes":[{"agent_name":"a","approve":true}]},"markdown":"# Result"}`))
		case "/v1/sessions/g_1/compactions":
			w.Write([]byte(`{"compactions":[]}`))
		case "/v1/roundtables/rt_gone":
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":{"code":"internal","message":"disk"}}`))
		default:
			t.Errorf("unexpected request %s", r.URL.RequestURI())
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	tr, err := a.Reload("g_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != 2 || tr.LastEventID != 9 {
		t.Fatalf("transcript %+v", tr)
	}
	if len(tr.Roundtables) != 2 {
		t.Fatalf("cards %+v", tr.Roundtables)
	}
	old, live := tr.Roundtables[0], tr.Roundtables[1]
	if old.RunID != "rt_old" || old.TurnID != "t1" || old.Source != "agent" || old.Status != "completed" || old.Outcome != "approved" ||
		old.Markdown != "# Result" || !strings.Contains(string(old.Result), `"votes"`) || len(old.Participants) != 2 {
		t.Fatalf("finished card %+v", old)
	}
	if live.RunID != "rt_live" || live.Status != "running" || live.Result != nil || strings.Join(live.Participants, ",") != "a,b" {
		t.Fatalf("running card %+v", live)
	}
	// The window gets no raw answers; a running run is not read in full.
	b, _ := json.Marshal(tr)
	if strings.Contains(string(b), `"big"`) || strings.Contains(string(b), "answers") {
		t.Fatalf("answers leaked into the transcript: %s", b)
	}
	for _, p := range paths {
		if p == "/v1/roundtables/rt_live" {
			t.Fatalf("a running run was read in full")
		}
	}
}

// Without the round-table routes (an older service) the transcript loads
// as before, with no cards.
func TestReloadWithoutRoundtableRoutes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/sessions/g_1/messages" {
			w.Write([]byte(`{"messages":[{"id":1,"role":"user","text":"hi"}],"lastEventId":1}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"code":"not_found","message":"no route"}}`))
	}))
	defer srv.Close()
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	tr, err := a.Reload("g_1")
	if err != nil || len(tr.Messages) != 1 || tr.Roundtables == nil || len(tr.Roundtables) != 0 {
		t.Fatalf("transcript %+v, %v", tr, err)
	}
}
