package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
	"jarvis/service/store"
)

// answers are the Inbox's items of kind "answer".
func (e *env) answers() []api.InboxItem {
	e.t.Helper()
	var out []api.InboxItem
	for _, it := range e.inbox().Items {
		if it.Kind == "answer" {
			out = append(out, it)
		}
	}
	return out
}

// TestExternalAnswersComeToTheInboxOncePerDelivery: an external agent's
// replies, posted over HTTP to the callback URL it was given, each become
// one Inbox item (title, text, conversation); the same delivery sent again
// (same Idempotency-Key) adds nothing, another delivery adds another.
func TestExternalAnswersComeToTheInboxOncePerDelivery(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL+"/v1/assistant/input", ""))
	sid := e.extSession("ext", "AWAY-1")
	if _, err := e.c.Chat(context.Background(), sid, "research the flights"); err != nil {
		t.Fatal(err)
	}
	if a := e.answers(); len(a) != 0 {
		t.Fatalf("an answer before any reply: %+v", a)
	}
	ins, _ := peer.got()
	cb := ins[0].CallbackURL
	for i, d := range []struct{ key, text string }{{"d-1", "Found three flights."}, {"d-1", "Found three flights."}, {"d-2", "The cheapest leaves at 9:40."}} {
		if r := extPost(t, cb, "application/json", []byte(`{"text":"`+d.text+`"}`), map[string]string{"Idempotency-Key": d.key}); r.status != 200 {
			t.Fatalf("delivery %d: %+v", i, r)
		}
	}
	a := e.answers()
	if len(a) != 2 {
		t.Fatalf("%d answers, want one per delivery: %+v", len(a), a)
	}
	// newest first
	if a[0].Body != "The cheapest leaves at 9:40." || a[1].Body != "Found three flights." {
		t.Fatalf("answers: %+v", a)
	}
	for _, it := range a {
		if it.Title != "ext answered" || it.SessionID != sid || it.State != "open" || it.Read {
			t.Fatalf("item %+v", it)
		}
	}
	if in := e.inbox(); in.Unread != 2 {
		t.Fatalf("unread %d", in.Unread)
	}
	// A restart does not add them again, and they stay.
	e.stop()
	e.start()
	if a := e.answers(); len(a) != 2 || !strings.Contains(a[1].Body, "three flights") {
		t.Fatalf("after a restart: %+v", a)
	}
}

// TestDelegatedRepliesThatArriveWhileAwayComeToTheInbox: an in-process
// agent's reply to agents_message becomes one Inbox item when it lands
// after the caller's turn is over (async, or past the caller's timeout),
// in the target's conversation, keyed by the delegated turn; a sync reply
// the caller's turn took while it ran adds none. A restart adds nothing.
func TestDelegatedRepliesThatArriveWhileAwayComeToTheInbox(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	sid := e.session("j1")

	// Sync, answered within the caller's turn: no item.
	evs := e.agChat(sid, `[[tool agents_message {"agentId":"notes","content":"[[deltas 2]]"}]]`)
	if r := delegationResult(t, agDelegations(t, evs)[0]); r.Status != "complete" {
		t.Fatalf("sync: %+v", r)
	}

	// Async: the caller's turn ends at once; the reply comes later.
	evs = e.agChat(sid, `[[tool agents_message {"agentId":"notes","content":"[[slow 100]] [[deltas 4]]","mode":"async","session":"create"}]]`)
	async := delegationResult(t, agDelegations(t, evs)[0])
	// Past the caller's timeout: the reply lands after its turn ended.
	evs = e.agChat(sid, `[[tool agents_message {"agentId":"notes","content":"[[slow 150]] [[deltas 5]]","timeout":0.3,"session":"create"}]]`)
	late := delegationResult(t, agDelegations(t, evs)[0])
	if async.Status != "started" || late.Status != "timeout" {
		t.Fatalf("async %+v late %+v", async, late)
	}
	var got []api.InboxItem
	testwait.Until(t, "both late replies in the Inbox", 10*time.Second, func() bool {
		got = e.answers()
		return len(got) >= 2
	})
	bySession := map[string]api.InboxItem{}
	for _, it := range got {
		bySession[it.SessionID] = it
	}
	if len(got) != 2 || bySession[async.SessionID].Body != "w0 w1 w2 w3" || bySession[late.SessionID].Body != "w0 w1 w2 w3 w4" ||
		bySession[async.SessionID].Title != "Notes answered" || bySession[async.SessionID].ID != store.AnswerID("delegate", "notes", async.SessionID, async.ResponseID) {
		t.Fatalf("answers: %+v", got)
	}
	e.stop()
	e.start()
	if a := e.answers(); len(a) != 2 {
		t.Fatalf("after a restart: %+v", a)
	}
}
