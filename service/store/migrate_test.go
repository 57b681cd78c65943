package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/service/store"
)

// Every earlier schema (a database each made by the build that added a
// migration, testdata/README.md) opens with today's store with its data
// intact and working: sessions, the transcript, events to replay, a turn
// left running, the search index, and space given back on delete.
func TestMigrateFromEarlierSchemas(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/schema-*.db")
	if err != nil || len(fixtures) < 7 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			ctx := context.Background()
			raw, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "jarvis.db")
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if v, err := st.IntegrityCheck(ctx); err != nil || v != "ok" {
				t.Fatalf("integrity after migrating: %q %v", v, err)
			}
			list, err := st.ListSessions(ctx, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.ID)
			}
			if got := strings.Join(ids, " "); got != "g_fix_code g_fix_trip" && got != "g_fix_trip g_fix_code" {
				t.Fatalf("sessions: %q", got)
			}
			trip, err := st.Session(ctx, "g_fix_trip")
			if err != nil || trip.Name != "Trip planning" || trip.AgentID != "general" {
				t.Fatalf("session: %+v %v", trip, err)
			}
			if s, err := st.SessionByJarvisID(ctx, "j_fix_code"); err != nil || s.ID != "g_fix_code" {
				t.Fatalf("by jarvis id: %+v %v", s, err)
			}
			msgs, err := st.Messages(ctx, "g_fix_trip")
			if err != nil || len(msgs) != 4 {
				t.Fatalf("transcript: %+v %v", msgs, err)
			}
			if msgs[0].Content != "Plan a trip to Lisbon in May" || !strings.Contains(msgs[1].ToolCalls, `"read_file"`) ||
				msgs[2].ToolCallID != "call_1" || msgs[2].Content != "notes: trams, pastries" || msgs[3].Content != "Lisbon has trams; take tram 28 early." {
				t.Fatalf("transcript: %+v", msgs)
			}
			evs, err := st.EventsAfter(ctx, "g_fix_trip", 1, 10)
			if err != nil || len(evs) != 2 || evs[1].Type != "assistant.final" || !strings.Contains(evs[1].Data, "tram 28") {
				t.Fatalf("replay: %+v %v", evs, err)
			}
			if n, err := st.LastSeq(ctx, "g_fix_code"); err != nil || n != 1 {
				t.Fatalf("last seq %d %v", n, err)
			}
			if tu, err := st.Turn(ctx, "t_fix_1"); err != nil || tu.Status != store.TurnDone || tu.EndedAt == "" {
				t.Fatalf("turn: %+v %v", tu, err)
			}
			if run, err := st.InterruptRunning(ctx); err != nil || len(run) != 1 || run[0].ID != "t_fix_2" {
				t.Fatalf("running turns: %+v %v", run, err)
			}
			for q, want := range map[string]string{"LISBON": "g_fix_trip", "isbo": "g_fix_trip", "ünïcode": "g_fix_code", "28": "g_fix_trip"} {
				hits, err := st.SearchSessions(ctx, q, "", 0)
				if err != nil || len(hits) != 1 || hits[0].Session.ID != want {
					t.Fatalf("search %q: %+v %v", q, hits, err)
				}
			}
			// The index was rebuilt from the old one's messages: deleting
			// them removes them from it too.
			if err := st.DeleteSession(ctx, "g_fix_trip"); err != nil {
				t.Fatal(err)
			}
			if hits, err := st.SearchSessions(ctx, "Lisbon", "", 0); err != nil || len(hits) != 0 {
				t.Fatalf("search after delete: %+v %v", hits, err)
			}
			if err := st.Maintain(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := st.FreePages(ctx); err != nil || n != 0 {
				t.Fatalf("free pages after reclaim: %d %v", n, err)
			}
			if v, err := st.IntegrityCheck(ctx); err != nil || v != "ok" {
				t.Fatalf("integrity at the end: %q %v", v, err)
			}
		})
	}
}
