package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"jarvis/service/store"
)

// fileSize is the size of the database file alone (the store is closed, so
// its WAL has been checkpointed into it and removed).
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatalf("%s-wal is still there after Close", path)
	}
	return fi.Size()
}

func pragma(t *testing.T, path, name string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`PRAGMA ` + name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Deleting conversations gives their pages back to the file system: the
// file shrinks once the store has reclaimed, not only its free list grows.
func TestDeleteGivesSpaceBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a line of a long conversation about the garden ", 40) // ~2 KB
	var ids []string
	for i := range 40 {
		sess, err := st.CreateSession(ctx, store.Session{ID: "g_" + string(rune('a'+i/26)) + string(rune('a'+i%26)), AgentID: "general"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
		for range 40 {
			if _, err := st.AddMessage(ctx, store.Message{SessionID: sess.ID, Role: "user", Content: text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := st.SearchSessions(ctx, "garden", "", 1); err != nil { // indexes them
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	full := fileSize(t, path)
	if m := pragma(t, path, "auto_vacuum"); m != 2 {
		t.Fatalf("auto_vacuum is %d, want 2 (incremental)", m)
	}

	if st, err = store.Open(ctx, path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:30] {
		if err := st.DeleteSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[30:35] {
		if err := st.ClearSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.FreePages(ctx); err != nil || n != 0 {
		t.Fatalf("free pages after Maintain: %d %v", n, err)
	}
	hits, err := st.SearchSessions(ctx, "garden", "", 0)
	if err != nil || len(hits) != 5 {
		t.Fatalf("search after deleting: %d hits %v, want the 5 sessions left", len(hits), err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path)
	t.Logf("40 conversations: %d bytes; 35 deleted or cleared and reclaimed: %d bytes", full, after)
	if after*4 > full {
		t.Fatalf("the file went from %d to %d bytes after deleting seven eighths of its conversations", full, after)
	}
}

// Events are kept whole for the replay window, then deleted: the session's
// seqs go on from its replay horizon and a replay from before the horizon is
// known to be incomplete.
func TestCompactEventsPastTheWindow(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{Now: clock, ReplayWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_1", AgentID: "general"}); err != nil {
		t.Fatal(err)
	}
	seq := int64(0)
	next := func(string, func() (int64, error)) int64 { seq++; return seq }
	turn := func(id string, finish bool) {
		t.Helper()
		user := &store.Message{SessionID: "g_1", Role: "user", Content: "question " + id}
		evs := []store.EventWrite{
			{Event: store.Event{SessionID: "g_1", Type: "user.message", Data: `{"text":"question ` + id + `","turn_id":"` + id + `"}`, CreatedAt: store.Timestamp(now)}, Write: st.StartTurn(id, "", user, "")},
			{Event: store.Event{SessionID: "g_1", Type: "assistant.delta", Data: `{"text":"ans","turn_id":"` + id + `"}`, CreatedAt: store.Timestamp(now)}},
		}
		if finish {
			evs = append(evs, store.EventWrite{Event: store.Event{SessionID: "g_1", Type: "assistant.final", Data: `{"text":"answer","turn_id":"` + id + `"}`, CreatedAt: store.Timestamp(now)},
				Write: st.FinishTurn(id, "g_1", store.TurnDone, "", &store.Message{SessionID: "g_1", TurnID: id, Role: "assistant", Content: "answer"}, "")})
		}
		errs, err := st.AppendEvents(ctx, evs, next)
		if err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
	}
	turn("t_1", true) // seqs 1-3
	now = now.Add(30 * time.Minute)
	turn("t_2", true) // 4-6
	now = now.Add(45 * time.Minute)
	if err := st.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	// t_1 is past the hour, t_2 is not.
	evs, err := st.EventsAfter(ctx, "g_1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqs(evs); got != "4 5 6" {
		t.Fatalf("events after compaction: %s, want 4 5 6", got)
	}
	if h, err := st.ReplayHorizon(ctx, "g_1"); err != nil || h != 3 {
		t.Fatalf("horizon %d %v, want 3", h, err)
	}
	// Turns stay with their events gone: a session's branches are the
	// chain of their parents.
	// A done turn's times are its messages'.
	if tu, err := st.Turn(ctx, "t_1"); err != nil || tu.Status != store.TurnDone || tu.StartedAt != store.Timestamp(start) || tu.EndedAt != store.Timestamp(start) {
		t.Fatalf("t_1 past the window: %+v %v, want kept, started and ended at %s", tu, err, store.Timestamp(start))
	}
	if tu, err := st.Turn(ctx, "t_2"); err != nil || tu.Status != store.TurnDone {
		t.Fatalf("t_2: %+v %v", tu, err)
	}
	// A turn still running past the window keeps its events and what follows.
	turn("t_3", false) // 7-8, running
	now = now.Add(3 * time.Hour)
	if err := st.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ = st.EventsAfter(ctx, "g_1", 0, 100)
	if got := seqs(evs); got != "7 8" {
		t.Fatalf("events with a running turn: %s, want 7 8", got)
	}
	// At rest every event goes: the seqs go on from the replay horizon.
	if _, err := st.InterruptRunning(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateSession(ctx, "g_1", nil, nil, nil); err != nil { // a change since the last run
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if err := st.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ = st.EventsAfter(ctx, "g_1", 0, 100)
	if got := seqs(evs); got != "" {
		t.Fatalf("events at rest: %s, want none", got)
	}
	if n, err := st.LastSeq(ctx, "g_1"); err != nil || n != 8 {
		t.Fatalf("last seq %d %v, want 8", n, err)
	}
	if h, _ := st.ReplayHorizon(ctx, "g_1"); h != 8 {
		t.Fatalf("horizon %d, want 8", h)
	}
	if tu, err := st.Turn(ctx, "t_3"); err != nil || tu.Status != store.TurnInterrupted {
		t.Fatalf("an interrupted turn is kept: %+v %v", tu, err)
	}
}

func seqs(evs []store.Event) string {
	var b []string
	for _, e := range evs {
		b = append(b, itoa(e.Seq))
	}
	return strings.Join(b, " ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Pruning the external agents' audit rows to their cap gives the space
// back at the next maintenance run, as deleting conversations does.
func TestPruningTheAuditGivesSpaceBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_ext", AgentID: "ext"}); err != nil {
		t.Fatal(err)
	}
	var rows []store.ExternalAudit
	for i := range 20000 {
		rows = append(rows, store.ExternalAudit{SessionID: "g_ext", AgentID: "ext", Bytes: 512, Auth: "failed",
			Reason: fmt.Sprintf("signature did not match (attempt %d from a misconfigured sender)", i)})
	}
	if err := st.AddExternalAudits(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	full := fileSize(t, path)
	if st, err = store.Open(ctx, path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.PruneExternalAudit(ctx, 1000); err != nil || n != 19000 {
		t.Fatalf("pruned %d %v, want 19000", n, err)
	}
	if err := st.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path)
	t.Logf("20,000 audit rows: %d bytes; pruned to 1,000 and maintained: %d bytes", full, after)
	if after*4 > full {
		t.Fatalf("the file went from %d to %d bytes after pruning 19 of 20 audit rows in 20", full, after)
	}
}
