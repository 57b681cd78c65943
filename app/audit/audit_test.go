package audit

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 2, 11, 9, 0, 0, 0, time.UTC)

// clock ticks one second per call.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func open(t *testing.T, path string) *Log {
	t.Helper()
	c := &clock{t: t0}
	l, err := Open(path, Options{Now: c.Now, MaxTextBytes: 64, KeyDir: path + ".keys"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func entry(tool, decision, by string) Entry {
	return Entry{SessionID: "j_1", ToolCallID: "call_" + tool, Tool: tool, Arguments: json.RawMessage(`{ "path" : "a.txt" }`),
		ProposedRisk: "safe", Class: "safe", Decision: decision, DecidedBy: by, Result: "ok", DurationMS: 3}
}

// seed appends n entries and returns them.
func seed(t *testing.T, l *Log, n int) []Entry {
	t.Helper()
	var out []Entry
	for i := range n {
		e := entry([]string{"read_file", "write_file", "run_command"}[i%3], Allowed, ByPolicy)
		if i%2 == 1 {
			e.Decision, e.DecidedBy, e.Result, e.Error = Denied, ByUser, "", "denied by the user"
		}
		got, err := l.Append(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// raw opens the file behind the Log's back, as an attacker with file access
// would.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", DSN(path, "_busy_timeout=5000"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestAppendChainsRows(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "audit.db"))
	got := seed(t, l, 3)
	for i, e := range got {
		if e.ID != int64(i+1) {
			t.Fatalf("id %d, want %d", e.ID, i+1)
		}
		want := Genesis
		if i > 0 {
			want = got[i-1].Hash
		}
		if e.PrevHash != want || len(e.Hash) != 64 || e.Hash == e.PrevHash {
			t.Fatalf("row %d: prev %s hash %s", e.ID, e.PrevHash, e.Hash)
		}
		if !e.Time.Equal(t0.Add(time.Duration(i+1) * time.Second)) {
			t.Fatalf("time %v", e.Time)
		}
	}
	if string(got[0].Arguments) != `{"path":"a.txt"}` {
		t.Fatalf("arguments not canonical: %s", got[0].Arguments)
	}
	listed, err := l.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 {
		t.Fatalf("%d rows", len(listed))
	}
	for i := range listed {
		a, _ := json.Marshal(listed[i])
		b, _ := json.Marshal(got[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("listed %s\nappended %s", a, b)
		}
	}
	rep, err := l.Verify(context.Background())
	if err != nil || !rep.OK || rep.Rows != 3 || len(rep.Warnings) != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

func TestAppendValidatesAndCaps(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "audit.db"))
	ctx := context.Background()
	for name, e := range map[string]Entry{
		"no tool":        {Class: "safe", Decision: Allowed, DecidedBy: ByPolicy},
		"no class":       {Tool: "x", Decision: Allowed, DecidedBy: ByPolicy},
		"bad decision":   {Tool: "x", Class: "safe", Decision: "maybe", DecidedBy: ByPolicy},
		"bad decided_by": {Tool: "x", Class: "safe", Decision: Allowed, DecidedBy: "model"},
	} {
		if _, err := l.Append(ctx, e); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	e := entry("read_file", Allowed, ByPolicy)
	e.Arguments = json.RawMessage(`{"path": "a.txt"`) // malformed, still recorded
	e.Result = strings.Repeat("é", 40)                // 80 bytes, cap is 64
	e.Time = time.Date(2026, 1, 1, 0, 0, 0, 5, time.FixedZone("X", 3600))
	got, err := l.Append(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(got.Arguments, &s); err != nil || s != `{"path": "a.txt"` {
		t.Fatalf("malformed arguments stored as %s", got.Arguments)
	}
	if want := strings.Repeat("é", 32) + "…[truncated 16 bytes]"; got.Result != want {
		t.Fatalf("result %q", got.Result)
	}
	if !got.Time.Equal(e.Time) {
		t.Fatalf("time %v, want %v", got.Time, e.Time)
	}
	if rep, _ := l.Verify(ctx); !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestTriggersRefuseUpdateAndDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path)
	seed(t, l, 2)
	db := raw(t, path)
	for _, q := range []string{
		`UPDATE audit_log SET result = 'forged' WHERE id = 1`,
		`DELETE FROM audit_log WHERE id = 2`,
		`DELETE FROM audit_log`,
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v", q, err)
		}
	}
	if rep, _ := l.Verify(context.Background()); !rep.OK || rep.Rows != 2 {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestVerifyDetectsTampering edits the file with raw SQL after dropping the
// triggers, as someone with access to the file could.
func TestVerifyDetectsTampering(t *testing.T) {
	tests := []struct {
		name   string
		sql    []string
		badID  int64
		reason string
	}{
		{"result changed", []string{`UPDATE audit_log SET result = 'forged' WHERE id = 2`}, 2, "changed"},
		{"decision changed", []string{`UPDATE audit_log SET decision = 'allowed', decided_by = 'user' WHERE id = 4`}, 4, "changed"},
		{"arguments changed", []string{`UPDATE audit_log SET arguments = '{"path":"b.txt"}' WHERE id = 1`}, 1, "changed"},
		{"time changed", []string{`UPDATE audit_log SET time = '2020-01-01T00:00:00.000000000Z' WHERE id = 3`}, 3, "changed"},
		{"hash recomputed", nil, 3, "prev_hash"}, // filled in below
		{"middle row deleted", []string{`DELETE FROM audit_log WHERE id = 2`}, 2, "missing"},
		{"first row deleted", []string{`DELETE FROM audit_log WHERE id = 1`}, 1, "missing"},
		{"last rows deleted", []string{`DELETE FROM audit_log WHERE id >= 4`}, 4, "removed from the end"},
		{"rows swapped", []string{
			`UPDATE audit_log SET id = 100 WHERE id = 2`,
			`UPDATE audit_log SET id = 2 WHERE id = 3`,
			`UPDATE audit_log SET id = 3 WHERE id = 100`,
		}, 2, "prev_hash"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.db")
			l := open(t, path)
			rows := seed(t, l, 5)
			db := raw(t, path)
			stmts := append([]string{`DROP TRIGGER audit_log_no_update`, `DROP TRIGGER audit_log_no_delete`}, tc.sql...)
			if tc.name == "hash recomputed" {
				// A careful forger fixes the row's own hash; the next row's
				// prev_hash still gives it away.
				r := row{}
				if err := r.scan(db.QueryRow(`SELECT ` + columns + ` FROM audit_log WHERE id = 2`)); err != nil {
					t.Fatal(err)
				}
				r.Result = "forged"
				stmts = append(stmts, fmt.Sprintf(`UPDATE audit_log SET result = 'forged', hash = '%s' WHERE id = 2`, r.hash(l.key, rows[0].Hash)))
			}
			for _, q := range stmts {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rep, err := l.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || rep.FirstBadID != tc.badID || !strings.Contains(rep.Reason, tc.reason) {
				t.Fatalf("report %+v; want first bad id %d, reason containing %q", rep, tc.badID, tc.reason)
			}
			if len(rep.Warnings) != 2 {
				t.Fatalf("dropped triggers not reported: %v", rep.Warnings)
			}
		})
	}
}

func TestFiltersAndExport(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "audit.db"))
	ctx := context.Background()
	seed(t, l, 6) // times t0+1s … t0+6s; odd ids allowed by policy, even denied by user
	other := entry("notify", Allowed, ByTimeout)
	other.Decision, other.SessionID, other.ToolCallID = Denied, "j_2", "call_x"
	if _, err := l.Append(ctx, other); err != nil {
		t.Fatal(err)
	}
	ids := func(es []Entry) []int64 {
		out := []int64{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all", Filter{}, []int64{1, 2, 3, 4, 5, 6, 7}},
		{"tool", Filter{Tool: "write_file"}, []int64{2, 5}},
		{"decision", Filter{Decision: Denied}, []int64{2, 4, 6, 7}},
		{"decided by", Filter{DecidedBy: ByTimeout}, []int64{7}},
		{"session", Filter{SessionID: "j_2"}, []int64{7}},
		{"tool call", Filter{ToolCallID: "call_x"}, []int64{7}},
		{"since", Filter{Since: t0.Add(5 * time.Second)}, []int64{5, 6, 7}},
		{"until", Filter{Until: t0.Add(3 * time.Second)}, []int64{1, 2}},
		{"window", Filter{Since: t0.Add(2 * time.Second), Until: t0.Add(4 * time.Second)}, []int64{2, 3}},
		{"limit", Filter{Limit: 2}, []int64{1, 2}},
		{"newest", Filter{Limit: 2, Newest: true}, []int64{7, 6}},
		{"after id", Filter{AfterID: 5}, []int64{6, 7}},
		{"combined", Filter{Tool: "read_file", Decision: Allowed}, []int64{1}},
		{"none", Filter{Tool: "nope"}, []int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("ids %v, want %v", ids(got), tc.want)
			}
			var buf bytes.Buffer
			if err := l.ExportJSONL(ctx, &buf, tc.f); err != nil {
				t.Fatal(err)
			}
			var exported []Entry
			sc := bufio.NewScanner(&buf)
			for sc.Scan() {
				var e Entry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				exported = append(exported, e)
			}
			if fmt.Sprint(ids(exported)) != fmt.Sprint(tc.want) {
				t.Fatalf("exported ids %v, want %v", ids(exported), tc.want)
			}
			for i := range exported {
				if exported[i].Hash != got[i].Hash || string(exported[i].Arguments) != string(got[i].Arguments) {
					t.Fatalf("export differs from List: %+v vs %+v", exported[i], got[i])
				}
			}
		})
	}
}

// TestConcurrentWriters appends from many goroutines through two Logs on
// the same file, standing in for the app and a second process.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	a := open(t, path)
	b := open(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := a
			if i%2 == 1 {
				l = b
			}
			_, err := l.Append(context.Background(), entry("notify", Allowed, ByPolicy))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rep, err := a.Verify(context.Background())
	if err != nil || !rep.OK || rep.Rows != 40 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

func TestReopenContinuesChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "audit.db")
	l, err := Open(path, Options{KeyDir: path + ".keys"})
	if err != nil {
		t.Fatal(err)
	}
	first := seed(t, l, 2)
	l.Close()
	l = open(t, path)
	next := seed(t, l, 1)[0]
	if next.ID != 3 || next.PrevHash != first[1].Hash {
		t.Fatalf("after reopen: %+v", next)
	}
	if rep, _ := l.Verify(context.Background()); !rep.OK || rep.Rows != 3 {
		t.Fatalf("verify: %+v", rep)
	}
	if _, err := Open(":memory:", Options{}); err == nil {
		t.Fatal("opened an in-memory log")
	}
}
