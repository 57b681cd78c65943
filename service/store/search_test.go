package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/service/store"
)

// TestSearchSessions finds conversations by their messages' text: any
// substring, any case, tool results and status lines left out, one hit per
// session with its newest matching message cut around the match, deleted
// and cleared sessions gone, per agent on request, and FTS5 syntax in the
// query taken as plain text.
func TestSearchSessions(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	add := func(sid, agent string, msgs ...store.Message) {
		t.Helper()
		if _, err := st.CreateSession(ctx, store.Session{ID: sid, AgentID: agent}); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			m.SessionID = sid
			if _, err := st.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	long := strings.Repeat("filler words ", 20)
	add("g_trip", "general",
		store.Message{Role: "user", Content: "Plan a trip to Lisbon in May"},
		store.Message{Role: "assistant", Content: long + "Lisbon has trams; take tram 28 early. " + long})
	add("g_tool", "general",
		store.Message{Role: "user", Content: "read the file"},
		store.Message{Role: "tool", Content: "Lisbon appears only in a tool result", ToolCallID: "c1"},
		store.Message{Role: "status", Content: "Lisbon in a status line"})
	add("g_code", "coder", store.Message{Role: "user", Content: `Why does "x AND y" NEAR(a b) fail? Ünïcode ok`})
	add("g_gone", "general", store.Message{Role: "user", Content: "Lisbon again, then deleted"})
	if err := st.DeleteSession(ctx, "g_gone"); err != nil {
		t.Fatal(err)
	}

	hits, err := st.SearchSessions(ctx, "LISBON", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Session.ID != "g_trip" || hits[0].Session.AgentID != "general" || hits[0].Role != "assistant" {
		t.Fatalf("hits %+v", hits)
	}
	if sn := hits[0].Snippet; !strings.Contains(sn, "Lisbon has trams") || !strings.HasPrefix(sn, "…") || !strings.HasSuffix(sn, "…") || len([]rune(sn)) > 2*40+len("Lisbon")+2 {
		t.Fatalf("snippet %q", sn)
	}
	// A substring inside a word, and a two-character query (the scan path).
	for _, q := range []string{"isbo", "28"} {
		if hits, err := st.SearchSessions(ctx, q, "", 0); err != nil || len(hits) != 1 || hits[0].Session.ID != "g_trip" {
			t.Fatalf("%q: %+v %v", q, hits, err)
		}
	}
	// Query syntax is text; non-ASCII letters fold case.
	for _, q := range []string{`"x AND y" NEAR(a b)`, "ünïcode", "%", `NEAR(`} {
		hits, err := st.SearchSessions(ctx, q, "", 0)
		if q == "%" {
			if err != nil || len(hits) != 0 {
				t.Fatalf("%% matches everything: %+v %v", hits, err)
			}
			continue
		}
		if err != nil || len(hits) != 1 || hits[0].Session.ID != "g_code" {
			t.Fatalf("%q: %+v %v", q, hits, err)
		}
	}
	if hits, err := st.SearchSessions(ctx, "Lisbon", "coder", 0); err != nil || len(hits) != 0 {
		t.Fatalf("other agent: %+v %v", hits, err)
	}
	if err := st.ClearSession(ctx, "g_trip"); err != nil {
		t.Fatal(err)
	}
	if hits, err := st.SearchSessions(ctx, "Lisbon", "", 0); err != nil || len(hits) != 0 {
		t.Fatalf("after clear: %+v %v", hits, err)
	}
}

// TestSearchIndexesOlderMessages opens a database whose messages were
// written before the search index existed: the migration indexes them.
func TestSearchIndexesOlderMessages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_old", AgentID: "general"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMessage(ctx, store.Message{SessionID: "g_old", Role: "user", Content: "an old note about sourdough"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Back to the schema before migrations 032 and 033.
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER messages_fts_delete`, `DROP TRIGGER messages_fts_update`, `DROP TABLE messages_fts`, `DROP TABLE messages_fts_upto`, `DELETE FROM schema_migrations WHERE version IN (32, 33)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	st, err = store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if hits, err := st.SearchSessions(ctx, "sourdough", "", 0); err != nil || len(hits) != 1 || hits[0].Session.ID != "g_old" {
		t.Fatalf("%+v %v", hits, err)
	}
}

// A page of results is the sessions whose newest matching message is
// newest, each once however many of its messages match, and ends at the
// limit.
func TestSearchPageByNewestMatch(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	add := func(sid, text string) {
		t.Helper()
		if _, err := st.AddMessage(ctx, store.Message{SessionID: sid, Role: "user", Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	for _, sid := range []string{"g_old", "g_busy", "g_new"} {
		if _, err := st.CreateSession(ctx, store.Session{ID: sid, AgentID: "general"}); err != nil {
			t.Fatal(err)
		}
	}
	add("g_old", "the garden in spring")
	for range 30 {
		add("g_busy", "more about the garden")
	}
	add("g_new", "a garden party")
	add("g_old", "nothing to find here") // newer, but not a match
	hits, err := st.SearchSessions(ctx, "garden", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Session.ID != "g_new" || hits[1].Session.ID != "g_busy" {
		t.Fatalf("page of 2: %+v", hits)
	}
	if hits, err = st.SearchSessions(ctx, "GARDEN", "", 10); err != nil || len(hits) != 3 || hits[2].Session.ID != "g_old" || hits[2].Snippet != "the garden in spring" {
		t.Fatalf("all: %+v %v", hits, err)
	}
}
