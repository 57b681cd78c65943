package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"jarvis/service/store"
)

// TestSessionLifecycle drives a session through the store alone: created,
// found by its desktop id, given messages, cleared, deleted (a tombstone
// that keeps its agent) and revived; a second session with the same ids
// is a conflict.
func TestSessionLifecycle(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	sess, err := st.CreateSession(ctx, store.Session{ID: "g_1", JarvisSessionID: "j-1", AgentID: "general", Name: "First"})
	if err != nil || sess.Attributes != "{}" || sess.CreatedAt == "" {
		t.Fatalf("create %+v %v", sess, err)
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_1", AgentID: "general"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same id: %v", err)
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_2", JarvisSessionID: "j-1", AgentID: "general"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same desktop id: %v", err)
	}
	if got, err := st.SessionByJarvisID(ctx, "j-1"); err != nil || got.ID != "g_1" || got.Name != "First" {
		t.Fatalf("by desktop id %+v %v", got, err)
	}

	for _, m := range []store.Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi there"}} {
		m.SessionID = sess.ID
		if stored, err := st.AddMessage(ctx, m); err != nil || stored.ID == 0 {
			t.Fatalf("add %+v %v", stored, err)
		}
	}
	msgs, err := st.Messages(ctx, sess.ID)
	if err != nil || len(msgs) != 2 || msgs[0].Content != "hello" || msgs[1].Role != "assistant" || msgs[0].ID >= msgs[1].ID {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	if after, err := st.MessagesAfter(ctx, sess.ID, msgs[0].ID); err != nil || len(after) != 1 || after[0].ID != msgs[1].ID {
		t.Fatalf("after %+v %v", after, err)
	}

	if err := st.ClearSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if msgs, _ := st.Messages(ctx, sess.ID); len(msgs) != 0 {
		t.Fatalf("cleared session keeps %d messages", len(msgs))
	}
	if got, err := st.Session(ctx, sess.ID); err != nil || got.Name != "First" || got.DeletedAt != "" {
		t.Fatalf("cleared session %+v %v", got, err)
	}

	if err := st.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, sess.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	got, err := st.Session(ctx, sess.ID)
	if err != nil || got.DeletedAt == "" || got.AgentID != "general" || got.JarvisSessionID != "" {
		t.Fatalf("tombstone %+v %v", got, err)
	}
	if _, err := st.SessionByJarvisID(ctx, "j-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted session keeps its desktop id: %v", err)
	}
	if err := st.ReviveSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Session(ctx, sess.ID); err != nil || got.DeletedAt != "" {
		t.Fatalf("revived %+v %v", got, err)
	}
	if _, err := st.Session(ctx, "g_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
