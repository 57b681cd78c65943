package sessionsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testhttp"
	"jarvis/internal/testwait"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/httpapi"
	"jarvis/service/sessionsapi"
	"jarvis/service/store"
)

// env is the session routes on a real SQLite file and event hub, behind
// the service's own handler adapter (the error envelope).
type env struct {
	st      *store.Store
	srv     *httptest.Server
	mu      sync.Mutex
	running map[string]bool // sessions with a turn running
	forgot  []string        // sessions Forget was told of
}

func newEnv(t *testing.T, configJSON string) *env {
	t.Helper()
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC) }
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	hub := events.New(st, events.Options{Now: now})
	t.Cleanup(func() { hub.Close(); st.Close() })
	c, err := config.Parse("config.json", []byte(configJSON))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{st: st, running: map[string]bool{}}
	a := &sessionsapi.API{Store: st, Hub: hub, Config: func() *config.Config { return c }, Now: now, Log: testLogger(t),
		Exposed: func(ag config.Agent) error {
			if ag.APIExposed != nil && !*ag.APIExposed {
				return httpapi.Errorf(http.StatusForbidden, "agent_not_exposed", "agent %q is not available through the API", ag.AgentID)
			}
			return nil
		},
		Running: func(id string) bool { e.mu.Lock(); defer e.mu.Unlock(); return e.running[id] },
		Forget:  func(id string) { e.mu.Lock(); defer e.mu.Unlock(); e.forgot = append(e.forgot, id) },
		AgentInfo: func(ag config.Agent) api.AgentInfo {
			return api.AgentInfo{AgentID: ag.AgentID, DisplayName: ag.DisplayName, Status: api.AgentStatus{State: "ready"}}
		},
		Warning: func() string { return "config reload refused" },
	}
	mux := http.NewServeMux()
	for pattern, h := range map[string]httpapi.HandlerFunc{
		"POST /v1/sessions": a.Create, "GET /v1/sessions": a.List, "GET /v1/sessions/search": a.Search,
		"GET /v1/sessions/{id}": a.Get, "GET /v1/sessions/{id}/messages": a.Messages, "PATCH /v1/sessions/{id}": a.Update,
		"POST /v1/sessions/{id}/clear": a.Clear, "DELETE /v1/sessions/{id}": a.Delete,
		"POST /api/plugins/sessions/operations/create": a.Operations, "GET /v1/agents": a.Agents,
	} {
		mux.Handle(pattern, httpapi.Adapt(testLogger(t), h))
	}
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// testLogger writes the handlers' log lines (a request's internal error) to the test's output.
func testLogger(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(t.Output(), nil)) }

func (e *env) do(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	testhttp.Do(t, method, e.srv.URL+path, body, want, out)
}

func (e *env) fails(t *testing.T, method, path, body string, status int, code string) map[string]any {
	t.Helper()
	return testhttp.Fails(t, method, e.srv.URL+path, body, status, code)
}

const twoAgents = `{"agents": [{"agentId": "general", "displayName": "General"},
	{"agentId": "coder", "displayName": "Coder", "uiVisible": false},
	{"agentId": "private", "displayName": "Private", "apiExposed": false}]}`

// TestSessionRoundTrip: a session is created (once per desktop id), listed,
// renamed, pinned and given attributes, read with its transcript, cleared
// (refused while a turn runs) and deleted; each change is published as a
// session event.
func TestSessionRoundTrip(t *testing.T) {
	e := newEnv(t, twoAgents)
	var cr api.CreateSessionResponse
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-1"}`, http.StatusCreated, &cr)
	if !cr.Created || !strings.HasPrefix(cr.GeneralSessionID, "g_") {
		t.Fatalf("create: %+v", cr)
	}
	id := cr.GeneralSessionID
	var again api.CreateSessionResponse
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-1", "agent_id": "coder"}`, http.StatusOK, &again)
	if again.GeneralSessionID != id || again.Created {
		t.Fatalf("same desktop id: %+v, want %s again", again, id)
	}
	var coder api.CreateSessionResponse
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-2", "agent_id": "coder"}`, http.StatusCreated, &coder)

	var list api.SessionList
	e.do(t, "GET", "/v1/sessions?agentId=general", "", http.StatusOK, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].AgentID != "general" {
		t.Fatalf("list of general: %+v", list)
	}

	var upd api.SessionSummary
	e.do(t, "PATCH", "/v1/sessions/"+id, `{"name": "  Trip plans  ", "pinned": true, "attributes": {"color": "blue"}}`, http.StatusOK, &upd)
	if upd.Name != "Trip plans" || upd.PinnedAt != store.Timestamp(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)) || string(upd.Attributes) != `{"color":"blue"}` {
		t.Fatalf("update: %+v attributes %s", upd, upd.Attributes)
	}

	ctx := context.Background()
	for _, m := range []store.Message{{SessionID: id, Role: "user", Content: "where to?"}, {SessionID: id, Role: "assistant", Content: "Lisbon"}} {
		if _, err := e.st.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var tr api.Transcript
	e.do(t, "GET", "/v1/sessions/"+id+"/messages", "", http.StatusOK, &tr)
	if len(tr.Messages) != 2 || tr.Messages[1].Text != "Lisbon" || tr.Messages[0].Role != "user" {
		t.Fatalf("transcript: %+v", tr)
	}
	var detail api.SessionDetail
	e.do(t, "GET", "/v1/sessions/"+id, "", http.StatusOK, &detail)
	if detail.Name != "Trip plans" || detail.Context != nil {
		t.Fatalf("detail: %+v", detail)
	}

	e.mu.Lock()
	e.running[id] = true
	e.mu.Unlock()
	e.fails(t, "POST", "/v1/sessions/"+id+"/clear", "", http.StatusConflict, "turn_in_progress")
	e.fails(t, "DELETE", "/v1/sessions/"+id, "", http.StatusConflict, "turn_in_progress")
	e.mu.Lock()
	e.running[id] = false
	e.mu.Unlock()

	var cleared api.SessionSummary
	e.do(t, "POST", "/v1/sessions/"+id+"/clear", "", http.StatusOK, &cleared)
	e.do(t, "GET", "/v1/sessions/"+id+"/messages", "", http.StatusOK, &tr)
	if cleared.SessionID != id || cleared.Name != "Trip plans" || len(tr.Messages) != 0 {
		t.Fatalf("cleared: %+v, transcript %+v", cleared, tr)
	}
	e.do(t, "DELETE", "/v1/sessions/"+id, "", http.StatusNoContent, nil)
	e.fails(t, "GET", "/v1/sessions/"+id, "", http.StatusNotFound, "session_not_found")
	e.do(t, "GET", "/v1/sessions?agentId=general", "", http.StatusOK, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("a deleted session is listed: %+v", list)
	}
	e.mu.Lock()
	forgot := strings.Join(e.forgot, ",")
	e.mu.Unlock()
	if forgot != id+","+id {
		t.Fatalf("Forget was told %q, want the session on clear and on delete", forgot)
	}

	var changes []string
	testwait.Until(t, "the three session events stored", 5*time.Second, func() bool {
		evs, err := e.st.EventsAfter(ctx, id, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		changes = changes[:0]
		for _, ev := range evs {
			var se api.SessionEvent
			if ev.Type != api.EventSession || json.Unmarshal([]byte(ev.Data), &se) != nil || se.Session.SessionID != id {
				t.Fatalf("unexpected event %+v", ev)
			}
			changes = append(changes, se.Change)
		}
		return len(changes) == 3
	})
	if got := strings.Join(changes, ","); got != "updated,cleared,deleted" {
		t.Fatalf("session events %s", got)
	}

	// The desktop id of a deleted session starts a new one.
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-1"}`, http.StatusCreated, &again)
	if again.GeneralSessionID == id {
		t.Fatalf("the deleted session %s came back", id)
	}
}

// TestSessionErrors: bad input gets the documented envelope with the field
// at fault.
func TestSessionErrors(t *testing.T) {
	e := newEnv(t, twoAgents)
	e.fails(t, "POST", "/v1/sessions", `{}`, http.StatusBadRequest, "missing_field")
	e.fails(t, "POST", "/v1/sessions", `{"jarvis_session_id": `, http.StatusBadRequest, "invalid_json")
	if d := e.fails(t, "POST", "/v1/sessions", `{"jarvis_session_id": "`+strings.Repeat("x", 257)+`"}`, http.StatusBadRequest, "invalid_field"); d["field"] != "jarvis_session_id" {
		t.Fatalf("details %v", d)
	}
	if d := e.fails(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j", "agent_id": "nobody"}`, http.StatusBadRequest, "unknown_agent"); d["field"] != "agent_id" {
		t.Fatalf("details %v", d)
	}
	e.fails(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j", "agent_id": "private"}`, http.StatusForbidden, "agent_not_exposed")
	if d := e.fails(t, "GET", "/v1/sessions/g_nothing", "", http.StatusNotFound, "session_not_found"); d["field"] != "id" {
		t.Fatalf("details %v", d)
	}

	var cr api.CreateSessionResponse
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-1"}`, http.StatusCreated, &cr)
	path := "/v1/sessions/" + cr.GeneralSessionID
	if d := e.fails(t, "PATCH", path, `{"name": "`+strings.Repeat("é", 201)+`"}`, http.StatusBadRequest, "invalid_field"); d["field"] != "name" {
		t.Fatalf("details %v", d)
	}
	if d := e.fails(t, "PATCH", path, `{"attributes": [1, 2]}`, http.StatusBadRequest, "invalid_field"); d["field"] != "attributes" {
		t.Fatalf("details %v", d)
	}
	e.fails(t, "PATCH", path, `{"attributes": null, "name": 3}`, http.StatusBadRequest, "invalid_json")
}

// TestOperationsCreate: the external agents' create-or-attach is idempotent,
// revives a deleted session and refuses another agent's session.
func TestOperationsCreate(t *testing.T) {
	e := newEnv(t, twoAgents)
	const path = "/api/plugins/sessions/operations/create"
	var first, again api.CreateOperationResponse
	e.do(t, "POST", path, `{"agentId": "general", "sessionId": " trip-1 "}`, http.StatusCreated, &first)
	e.do(t, "POST", path, `{"agentId": "general", "sessionId": "trip-1"}`, http.StatusCreated, &again)
	if !first.OK || first.Result.SessionID != "trip-1" || again.Result.SessionID != "trip-1" {
		t.Fatalf("create then attach: %+v %+v", first, again)
	}
	if d := e.fails(t, "POST", path, `{"agentId": "coder", "sessionId": "trip-1"}`, http.StatusConflict, "session_agent_mismatch"); d["agentId"] != "general" {
		t.Fatalf("details %v", d)
	}
	if d := e.fails(t, "POST", path, `{"agentId": "general", "sessionId": "a/b"}`, http.StatusBadRequest, "invalid_session_id"); d["field"] != "sessionId" {
		t.Fatalf("details %v", d)
	}
	e.fails(t, "POST", path, `{"sessionId": "x"}`, http.StatusBadRequest, "missing_field")
	e.fails(t, "POST", path, `{"agentId": "private"}`, http.StatusForbidden, "agent_not_exposed")

	e.do(t, "DELETE", "/v1/sessions/trip-1", "", http.StatusNoContent, nil)
	e.do(t, "POST", path, `{"agentId": "general", "sessionId": "trip-1"}`, http.StatusCreated, &again)
	e.do(t, "GET", "/v1/sessions/trip-1", "", http.StatusOK, nil) // revived

	var fresh api.CreateOperationResponse
	e.do(t, "POST", path, `{"agentId": "coder"}`, http.StatusCreated, &fresh)
	if !strings.HasPrefix(fresh.Result.SessionID, "g_") || fresh.Result.AgentID != "coder" {
		t.Fatalf("new session: %+v", fresh)
	}
}

// TestSearchAndAgents: search finds a session by its messages' text; the
// agent list leaves out hidden agents and carries the config warning.
func TestSearchAndAgents(t *testing.T) {
	e := newEnv(t, twoAgents)
	var cr api.CreateSessionResponse
	e.do(t, "POST", "/v1/sessions", `{"jarvis_session_id": "j-1"}`, http.StatusCreated, &cr)
	if _, err := e.st.AddMessage(context.Background(), store.Message{SessionID: cr.GeneralSessionID, Role: "user", Content: "the quarterly budget spreadsheet"}); err != nil {
		t.Fatal(err)
	}
	var found api.SessionSearch
	e.do(t, "GET", "/v1/sessions/search?q=budget", "", http.StatusOK, &found)
	if len(found.Results) != 1 || found.Results[0].Session.SessionID != cr.GeneralSessionID || !strings.Contains(found.Results[0].Snippet, "budget") {
		t.Fatalf("search: %+v", found)
	}
	e.do(t, "GET", "/v1/sessions/search?q=spaceship", "", http.StatusOK, &found)
	if len(found.Results) != 0 {
		t.Fatalf("search for absent text: %+v", found)
	}
	e.fails(t, "GET", "/v1/sessions/search?q=+", "", http.StatusBadRequest, "missing_field")
	if d := e.fails(t, "GET", "/v1/sessions/search?q=budget&limit=0", "", http.StatusBadRequest, "invalid_field"); d["field"] != "limit" {
		t.Fatalf("details %v", d)
	}
	e.fails(t, "GET", "/v1/sessions/search?q="+strings.Repeat("a", 257), "", http.StatusBadRequest, "invalid_field")

	var agents api.AgentList
	e.do(t, "GET", "/v1/agents", "", http.StatusOK, &agents)
	var ids []string
	for _, a := range agents.Agents {
		ids = append(ids, a.AgentID)
	}
	if strings.Join(ids, ",") != "general,private" || agents.Warning != "config reload refused" {
		t.Fatalf("agents %v, warning %q", ids, agents.Warning)
	}
}

func TestValidateSessionID(t *testing.T) {
	for in, want := range map[string]string{" abc_1-2 ": "abc_1-2", "": "", "a b": "", "é": "", strings.Repeat("a", 129): ""} {
		got, err := sessionsapi.ValidateSessionID(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ValidateSessionID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// The session list pages by position: limit and the nextCursor of each
// page give every session once, in order, also when they share a time.
func TestSessionListPages(t *testing.T) {
	e := newEnv(t, twoAgents)
	var all []string
	for i := range 7 {
		var cr api.CreateSessionResponse
		e.do(t, "POST", "/v1/sessions", fmt.Sprintf(`{"jarvis_session_id": "j-%d"}`, i), http.StatusCreated, &cr)
		all = append(all, cr.GeneralSessionID)
	}
	var whole api.SessionList
	e.do(t, "GET", "/v1/sessions", "", http.StatusOK, &whole)
	if len(whole.Sessions) != 7 || whole.NextCursor != "" {
		t.Fatalf("whole list: %d sessions, cursor %q", len(whole.Sessions), whole.NextCursor)
	}
	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("more pages than sessions")
		}
		var page api.SessionList
		e.do(t, "GET", "/v1/sessions?limit=3&cursor="+url.QueryEscape(cursor), "", http.StatusOK, &page)
		for _, s := range page.Sessions {
			paged = append(paged, s.SessionID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	var want []string
	for _, s := range whole.Sessions {
		want = append(want, s.SessionID)
	}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, want %v", paged, want)
	}
	e.fails(t, "GET", "/v1/sessions?limit=0", "", http.StatusBadRequest, "invalid_field")
	e.fails(t, "GET", "/v1/sessions?limit=501", "", http.StatusBadRequest, "invalid_field")
	e.fails(t, "GET", "/v1/sessions?cursor=nonsense", "", http.StatusBadRequest, "invalid_field")
}

// The search pages through its hits: each page's sessions by their newest
// matching message, no session twice across pages, whatever the order of
// their older matches.
func TestSearchPages(t *testing.T) {
	e := newEnv(t, twoAgents)
	ctx := context.Background()
	var ids []string
	for i := range 7 {
		var cr api.CreateSessionResponse
		e.do(t, "POST", "/v1/sessions", fmt.Sprintf(`{"jarvis_session_id": "j-%d"}`, i), http.StatusCreated, &cr)
		ids = append(ids, cr.GeneralSessionID)
	}
	// Matches interleaved: each session's messages come round three times,
	// and one session has no match.
	for round := range 3 {
		for i, id := range ids {
			text := fmt.Sprintf("round %d: the garden plan of conversation %d", round, i)
			if i == 4 {
				text = "nothing to find here"
			}
			if _, err := e.st.AddMessage(ctx, store.Message{SessionID: id, Role: "user", Content: text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("more pages than sessions")
		}
		var page api.SessionSearch
		e.do(t, "GET", "/v1/sessions/search?q=Garden+plan&limit=2&cursor="+url.QueryEscape(cursor), "", http.StatusOK, &page)
		for _, h := range page.Results {
			paged = append(paged, h.Session.SessionID)
			if !strings.HasPrefix(h.Snippet, "round 2:") {
				t.Errorf("hit %s: snippet %q, want its newest match (round 2)", h.Session.SessionID, h.Snippet)
			}
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	// Newest match first: the sessions in the reverse order of the last round.
	want := []string{ids[6], ids[5], ids[3], ids[2], ids[1], ids[0]}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, want %v", paged, want)
	}
	e.fails(t, "GET", "/v1/sessions/search?q=garden&cursor=nonsense", "", http.StatusBadRequest, "invalid_field")
	e.fails(t, "GET", "/v1/sessions/search?q=garden&cursor=0", "", http.StatusBadRequest, "invalid_field")
}
