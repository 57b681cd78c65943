package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"jarvis/service/store"
)

// indexed counts the search index's rows for text, read from the file by a
// connection of the test's own.
func indexed(t *testing.T, path, text string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The index keeps no text (migration 044): the messages with that text
	// whose rowid the index gives for its first trigram.
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE f.messages_fts MATCH ? AND m.content = ?`,
		`"`+string([]rune(text)[:3])+`"`, text).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func hitIDs(t *testing.T, st *store.Store, q string) []string {
	t.Helper()
	hits, err := st.SearchSessions(context.Background(), q, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Session.ID)
	}
	return ids
}

// A turn's commits do not write the search index (migration 033); a search
// still finds every message stored before it, the turn's start and end
// included, each once.
func TestSearchFindsMessagesTheCommitsDidNotIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_1", AgentID: "general"}); err != nil {
		t.Fatal(err)
	}
	user := &store.Message{SessionID: "g_1", Role: "user", Content: "where is the marmalade"}
	reply := &store.Message{SessionID: "g_1", TurnID: "t_1", Role: "assistant", Content: "in the pantry, top shelf"}
	seq := func(string, func() (int64, error)) int64 { return 1 }
	if _, err := st.AppendEvents(ctx, []store.EventWrite{{Event: store.Event{SessionID: "g_1", Type: "user.message", Data: "{}"},
		Write: st.StartTurn("t_1", "", user, "where")}}, seq); err != nil {
		t.Fatal(err)
	}
	seq = func(string, func() (int64, error)) int64 { return 2 }
	if _, err := st.AppendEvents(ctx, []store.EventWrite{{Event: store.Event{SessionID: "g_1", Type: "assistant.final", Data: "{}"},
		Write: st.FinishTurn("t_1", "g_1", store.TurnDone, "", reply, "in the pantry")}}, seq); err != nil {
		t.Fatal(err)
	}
	if n := indexed(t, path, user.Content) + indexed(t, path, reply.Content); n != 0 {
		t.Fatalf("the turn's commits wrote %d rows of the search index; they should write none", n)
	}
	for _, q := range []string{"marmalade", "top shelf"} {
		if ids := hitIDs(t, st, q); len(ids) != 1 || ids[0] != "g_1" {
			t.Fatalf("search %q: %v, want [g_1]", q, ids)
		}
	}
	if n := indexed(t, path, user.Content) + indexed(t, path, reply.Content); n != 2 {
		t.Fatalf("after the search the index holds %d rows of the turn's two messages, want 2", n)
	}
}

// Messages not yet indexed when the process stops (or dies: nothing runs at
// Close) are indexed after the next Open; one changed or removed before it
// is indexed as it is then, or not at all.
func TestSearchIndexCatchesUpAfterReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"g_kept", "g_changed", "g_cleared"} {
		if _, err := st.CreateSession(ctx, store.Session{ID: id, AgentID: "general"}); err != nil {
			t.Fatal(err)
		}
	}
	// Indexed: a later change reaches the index through the update trigger.
	early, err := st.AddMessage(ctx, store.Message{SessionID: "g_changed", Role: "user", Content: "first draft about walruses"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := hitIDs(t, st, "walruses"); len(ids) != 1 {
		t.Fatalf("walruses: %v", ids)
	}
	late, err := st.AddMessage(ctx, store.Message{SessionID: "g_changed", Role: "assistant", Content: "a reply about penguins"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMessage(ctx, store.Message{SessionID: "g_kept", Role: "user", Content: "a note about lighthouses"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMessage(ctx, store.Message{SessionID: "g_cleared", Role: "user", Content: "a note about volcanoes"}); err != nil {
		t.Fatal(err)
	}
	if err := st.ClearSession(ctx, "g_cleared"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Both changed behind the store's back, one indexed and one not.
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for id, text := range map[int64]string{early.ID: "second draft about otters", late.ID: "a reply about puffins"} {
		if _, err := db.Exec(`UPDATE messages SET content = ? WHERE id = ?`, text, id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if st, err = store.Open(ctx, path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for q, want := range map[string]int{"lighthouses": 1, "volcanoes": 0, "walruses": 0, "otters": 1, "penguins": 0, "puffins": 1} {
		if ids := hitIDs(t, st, q); len(ids) != want {
			t.Errorf("search %q: %v, want %d hit(s)", q, ids, want)
		}
	}
	if n := indexed(t, path, "a reply about puffins"); n != 1 {
		t.Errorf("the message changed before it was indexed is in the index %d times, want once", n)
	}
}

// A backlog larger than one indexing transaction is indexed whole before a
// search answers.
func TestSearchIndexesABacklogInBatches(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"g_first", "g_middle", "g_last"} {
		if _, err := st.CreateSession(ctx, store.Session{ID: id, AgentID: "general"}); err != nil {
			t.Fatal(err)
		}
	}
	add := func(sid, text string) {
		t.Helper()
		if _, err := st.AddMessage(ctx, store.Message{SessionID: sid, Role: "user", Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	add("g_first", "the first note, about sundials")
	for i := 0; i < 1200; i++ {
		add("g_middle", fmt.Sprintf("filler message %d", i))
	}
	add("g_last", "the last note, about hourglasses")
	for q, want := range map[string]string{"sundials": "g_first", "hourglasses": "g_last", "filler message 1199": "g_middle"} {
		if ids := hitIDs(t, st, q); len(ids) != 1 || ids[0] != want {
			t.Errorf("search %q: %v, want [%s]", q, ids, want)
		}
	}
}
