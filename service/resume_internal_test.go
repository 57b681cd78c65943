package service

import (
	"context"
	"fmt"
	"testing"

	"jarvis/service/store"
)

// A resumed run's "stopped" failure item is settled however many newer
// items the Inbox holds (it was looked for among the 500 newest only).
func TestSettleStoppedFindsTheRunsItemBehindAFullInbox(t *testing.T) {
	s, _ := serve(t, `{"agents":[{"agentId":"general"}]}`, "tok")
	ctx := context.Background()
	if _, err := s.st.AddInbox(ctx, store.InboxRow{ID: "in_stop", Kind: "failure", Title: "Daily note: stopped", RunID: "run_1", State: "open"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.AddInbox(ctx, store.InboxRow{ID: "in_other", Kind: "failure", Title: "Other: failed", RunID: "run_2", State: "open"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 520; i++ {
		if _, err := s.st.AddInbox(ctx, store.InboxRow{ID: fmt.Sprintf("in_%03d", i), Kind: "result", Title: "later", RunID: fmt.Sprintf("run_x%d", i), State: "open"}); err != nil {
			t.Fatal(err)
		}
	}
	s.settleStopped(ctx, "run_1")
	it, err := s.st.InboxItem(ctx, "in_stop")
	if err != nil {
		t.Fatal(err)
	}
	if !it.Done || !it.Read {
		t.Fatalf("the resumed run's stop item is still open behind 520 newer items: %+v", it)
	}
	other, err := s.st.InboxItem(ctx, "in_other")
	if err != nil {
		t.Fatal(err)
	}
	if other.Done || other.Read {
		t.Fatalf("another run's failure was settled too: %+v", other)
	}
}
