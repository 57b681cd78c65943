package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"jarvis/api"
)

// POST /v1/agents/{agentId}/session: the most recently updated live session
// of the agent, else a new one.
func TestDefaultRoutingToAgentSession(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	first, status := e.routeAgent("notes")
	if status != http.StatusCreated || !first.Created || first.Session.AgentID != "notes" || first.Session.SessionID == "" {
		t.Fatalf("first %d %+v", status, first)
	}
	again, status := e.routeAgent("notes")
	if status != http.StatusOK || again.Created || again.Session.SessionID != first.Session.SessionID {
		t.Fatalf("again %d %+v", status, again)
	}
	// A newer session of the agent (a message advances updatedAt) wins.
	var op api.CreateOperationResponse
	if st := e.agDo("POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "notes"}, &op); st != http.StatusCreated {
		t.Fatalf("create %d", st)
	}
	e.agChat(op.Result.SessionID, "newer")
	if r, _ := e.routeAgent("notes"); r.Session.SessionID != op.Result.SessionID {
		t.Fatalf("routed to %s, want the most recently updated %s", r.Session.SessionID, op.Result.SessionID)
	}
	// Renaming the older one makes it the most recent.
	e.agDo("PATCH", "/v1/sessions/"+first.Session.SessionID, map[string]any{"name": "Groceries"}, nil)
	if r, _ := e.routeAgent("notes"); r.Session.SessionID != first.Session.SessionID || r.Session.Name != "Groceries" {
		t.Fatalf("after rename routed to %+v", r.Session)
	}
	// Deleted sessions are skipped; other agents' sessions never count.
	if st := e.agDo("DELETE", "/v1/sessions/"+first.Session.SessionID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("delete %d", st)
	}
	e.routeAgent("todo")
	if r, _ := e.routeAgent("notes"); r.Session.SessionID != op.Result.SessionID {
		t.Fatalf("after delete routed to %s", r.Session.SessionID)
	}
	var eb api.ErrorBody
	if st := e.agDo("POST", "/v1/agents/ghost/session", nil, &eb); st != http.StatusNotFound || eb.Error.Code != "unknown_agent" {
		t.Fatalf("unknown agent %d %+v", st, eb)
	}
}

func TestSessionPinAttributesAndListByAgent(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	n1, _ := e.routeAgent("notes")
	var op api.CreateOperationResponse
	e.agDo("POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "notes"}, &op)
	n2 := op.Result.SessionID
	t1, _ := e.routeAgent("todo")
	e.agChat(n1.Session.SessionID, "latest message")

	// List by agent, most recently updated first.
	ss := e.agSessions("notes")
	if len(ss) != 2 || ss[0].SessionID != n1.Session.SessionID || ss[1].SessionID != n2 || ss[0].LastSnippet != "You said: latest message" {
		t.Fatalf("notes sessions %+v", ss)
	}
	if ts := e.agSessions("todo"); len(ts) != 1 || ts[0].SessionID != t1.Session.SessionID {
		t.Fatalf("todo sessions %+v", ts)
	}
	var all api.SessionList
	e.c.Do(context.Background(), "GET", "/v1/sessions", nil, &all)
	if len(all.Sessions) != 3 || all.Sessions[0].SessionID != n1.Session.SessionID {
		t.Fatalf("all sessions %+v", all.Sessions)
	}

	// Pin and attributes: stored, returned, and they advance updatedAt.
	var pinned api.SessionSummary
	if st := e.agDo("PATCH", "/v1/sessions/"+n2, map[string]any{"pinned": true, "attributes": map[string]any{"panel": "list", "n": 2}}, &pinned); st != http.StatusOK {
		t.Fatalf("patch %d", st)
	}
	if pinned.PinnedAt == "" || pinned.UpdatedAt <= op.Result.UpdatedAt {
		t.Fatalf("pinned %+v", pinned)
	}
	var attrs map[string]any
	json.Unmarshal(pinned.Attributes, &attrs)
	if attrs["panel"] != "list" || attrs["n"] != 2.0 {
		t.Fatalf("attributes %s", pinned.Attributes)
	}
	if ss := e.agSessions("notes"); ss[0].SessionID != n2 || ss[0].PinnedAt != pinned.PinnedAt {
		t.Fatalf("after pin %+v", ss)
	}
	var got api.SessionSummary
	e.c.Do(context.Background(), "GET", "/v1/sessions/"+n2, nil, &got)
	if got.PinnedAt != pinned.PinnedAt || string(got.Attributes) != string(pinned.Attributes) {
		t.Fatalf("get %+v", got)
	}
	var unpinned api.SessionSummary
	e.agDo("PATCH", "/v1/sessions/"+n2, map[string]any{"pinned": false}, &unpinned)
	if unpinned.PinnedAt != "" || string(unpinned.Attributes) != string(pinned.Attributes) {
		t.Fatalf("unpinned %+v", unpinned)
	}
	var eb api.ErrorBody
	if st := e.agDo("PATCH", "/v1/sessions/"+n2, map[string]any{"attributes": []int{1}}, &eb); st != http.StatusBadRequest || eb.Error.Code != "invalid_field" {
		t.Fatalf("array attributes %d %+v", st, eb)
	}

	// Clear keeps identity and metadata; a deleted session is revived by operations/create.
	e.agDo("PATCH", "/v1/sessions/"+n1.Session.SessionID, map[string]any{"name": "Kept"}, nil)
	var cleared api.SessionSummary
	e.agDo("POST", "/v1/sessions/"+n1.Session.SessionID+"/clear", nil, &cleared)
	if cleared.Name != "Kept" || cleared.AgentID != "notes" || cleared.LastSnippet != "" || len(e.agTranscript(n1.Session.SessionID)) != 0 {
		t.Fatalf("cleared %+v", cleared)
	}
	e.agDo("DELETE", "/v1/sessions/"+n2, nil, nil)
	if ss := e.agSessions("notes"); len(ss) != 1 {
		t.Fatalf("after delete %+v", ss)
	}
	if st := e.agDo("POST", "/api/plugins/sessions/operations/create", map[string]any{"agentId": "notes", "sessionId": n2}, &op); st != http.StatusCreated || op.Result.SessionID != n2 {
		t.Fatalf("revive %d %+v", st, op)
	}
	if ss := e.agSessions("notes"); len(ss) != 2 {
		t.Fatalf("after revive %+v", ss)
	}
}

// A client's <context .../> line is stored and sent to the model exactly as
// the client wrote it.
func TestContextLineIsKeptAsSent(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	msg := `<context panel-id="p1" panel-type="artifacts" panel-title="Lists &amp; notes" type="list" id="l1" name="Groceries" selection="i1,i2" mode="brief" />` + "\n  add   milk  "
	e.agChat(sid, msg)
	tr := e.agTranscript(sid)
	if tr[0].Role != "user" || tr[0].Text != msg {
		t.Fatalf("stored %q", tr[0].Text)
	}
	reqs := e.upstream.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if got := msgs[len(msgs)-1].Content; got != msg {
		t.Fatalf("model got %q", got)
	}
	if strings.Contains(msgs[0].Content, "<context") {
		t.Fatal("the server wrote a context line into the system prompt")
	}
}
