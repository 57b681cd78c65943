package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plainChain rewrites rows from id on as a forger without the key would:
// the row changed by change, then every hash recomputed with plain SHA-256
// so that the chain links up again.
func plainChain(t *testing.T, path string, from int64, change func(*row)) {
	t.Helper()
	db := raw(t, path)
	for _, q := range []string{`DROP TRIGGER IF EXISTS audit_log_no_update`, `DROP TRIGGER IF EXISTS audit_log_no_delete`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var prev string
	if err := db.QueryRow(`SELECT prev_hash FROM audit_log WHERE id = ?`, from).Scan(&prev); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT `+columns+` FROM audit_log WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	var rs []row
	for rows.Next() {
		var r row
		if err := r.scan(rows); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	for i := range rs {
		r := &rs[i]
		if i == 0 {
			change(r)
		}
		b, _ := json.Marshal(r)
		h := sha256.Sum256(append([]byte(prev), b...))
		r.PrevHash, r.Hash = prev, hex.EncodeToString(h[:])
		prev = r.Hash
		if _, err := db.Exec(`UPDATE audit_log SET result = ?, decision = ?, prev_hash = ?, hash = ? WHERE id = ?`, r.Result, r.Decision, r.PrevHash, r.Hash, r.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeyedChainDetectsForgery: with only the audit file in hand, a
// forger cannot rewrite, cut short or replace the log without Verify
// noticing: the chain is keyed and its head is anchored elsewhere.
func TestKeyedChainDetectsForgery(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, path string, l *Log) *Log // returns the log to verify
		reason string
	}{
		{"rewritten and rechained without the key", func(t *testing.T, path string, l *Log) *Log {
			plainChain(t, path, 3, func(r *row) { r.Decision, r.Result = Allowed, "forged" })
			return l
		}, "row 3"},
		{"cut short, sequence reset", func(t *testing.T, path string, l *Log) *Log {
			db := raw(t, path)
			for _, q := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE id >= 4`, `UPDATE sqlite_sequence SET seq = 3 WHERE name = 'audit_log'`} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			return l
		}, "removed from the end"},
		{"file deleted and created anew", func(t *testing.T, path string, l *Log) *Log {
			l.Close()
			for _, f := range []string{path, path + "-wal", path + "-shm"} {
				os.Remove(f)
			}
			l, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return l
		}, "removed from the end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // where the key and anchor go by default
			path := filepath.Join(t.TempDir(), "audit.db")
			l, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			seed(t, l, 5)
			if rep, err := l.Verify(context.Background()); err != nil || !rep.OK {
				t.Fatalf("before: %+v %v", rep, err)
			}
			v := tc.tamper(t, path, l)
			rep, err := v.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || !(strings.Contains(rep.Reason, tc.reason) || fmt.Sprintf("row %d", rep.FirstBadID) == tc.reason) {
				t.Fatalf("report %+v, want a failure mentioning %q", rep, tc.reason)
			}
		})
	}
}

// TestTamperedLogRefusesAppends: a log that no longer matches its anchor
// when opened is left as it is (evidence) and appends fail closed, with an
// error that says what to do; a missing or forged anchor is reported.
func TestTamperedLogRefusesAppends(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	keys := filepath.Join(dir, "keys")
	l, err := Open(path, Options{KeyDir: keys})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, l, 3)
	anchorFile := l.anchorFile
	l.Close()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	l, err = Open(path, Options{KeyDir: keys})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Append(context.Background(), entry("notify", Allowed, ByPolicy))
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "removed from the end") {
		t.Fatalf("append to a replaced log: %v", err)
	}
	l.Close()
	if b, _ := os.ReadFile(anchorFile); !strings.Contains(string(b), `"last_id":3`) {
		t.Fatalf("the anchor was overwritten: %s", b)
	}

	// Anchor removed after keyed rows were written.
	os.Remove(anchorFile)
	path2 := filepath.Join(dir, "b.db")
	l2, err := Open(path2, Options{KeyDir: keys})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, l2, 2)
	os.Remove(l2.anchorFile)
	if rep, _ := l2.Verify(context.Background()); rep.OK || !strings.Contains(rep.Reason, "anchor") {
		t.Fatalf("missing anchor: %+v", rep)
	}
	// A forged anchor (another key).
	writeAnchor(l2.anchorFile, make([]byte, 32), anchor{LastID: 2})
	if rep, _ := l2.Verify(context.Background()); rep.OK || !strings.Contains(rep.Reason, "does not verify") {
		t.Fatalf("forged anchor: %+v", rep)
	}
	l2.Close()
	// The key is gone: the log cannot go on under a new one.
	os.Remove(filepath.Join(keys, "key"))
	if _, err := Open(path2, Options{KeyDir: keys}); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("open without the key: %v", err)
	}
	if fi, err := os.Stat(keys); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("key dir: %v %v", fi, err)
	}
}

// memKeyring is a KeyStore in memory, standing in for the OS keyring
// (service/secrets' Store against a real one is tested in service/secrets).
type memKeyring map[string]string

func (m memKeyring) Get(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", errors.New("not found")
}
func (m memKeyring) Set(ref, v string) error { m[ref] = v; return nil }

// TestKeyInKeyring: with a keyring the key goes there, not to a file.
func TestKeyInKeyring(t *testing.T) {
	dir := t.TempDir()
	kr := memKeyring{}
	l, err := Open(filepath.Join(dir, "a.db"), Options{KeyDir: filepath.Join(dir, "keys"), Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seed(t, l, 2)
	if len(kr[KeyRef]) != 64 {
		t.Fatalf("keyring: %v", kr)
	}
	if _, err := os.Stat(filepath.Join(dir, "keys", "key")); err == nil {
		t.Fatal("a key file was written although the keyring took the key")
	}
	if rep, _ := l.Verify(context.Background()); !rep.OK {
		t.Fatalf("%+v", rep)
	}
}

// legacyColumns are the columns of migration 001, before the checkpoint.
const legacyColumns = `id, time, session_id, tool_call_id, tool, arguments, edited_arguments, proposed_risk,
	class, decision, decided_by, reason, result, error, duration_ms, prev_hash, hash`

// TestLegacyLogIsKeyedFromNowOn: a log written before the chain was keyed
// (plain SHA-256) opens, is verified as it was written, says so, and goes
// on keyed; rewriting its legacy rows breaks the first keyed row.
func TestLegacyLogIsKeyedFromNowOn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	// Build a legacy log: the first migration only, rows chained with SHA-256.
	db := raw(t, path)
	body, _ := migrations.ReadFile("migrations/001_init.sql")
	if _, err := db.Exec(string(body) + `; PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	prev := Genesis
	for i := int64(1); i <= 3; i++ {
		r := row{ID: i, Time: "2025-01-01T00:00:00.000000000Z", Tool: "notify", Arguments: "{}", Class: "safe", Decision: Allowed, DecidedBy: ByPolicy}
		r.PrevHash, r.Hash = prev, r.hash(nil, prev)
		if _, err := db.Exec(`INSERT INTO audit_log (`+legacyColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			r.ID, r.Time, r.SessionID, r.ToolCallID, r.Tool, r.Arguments, r.EditedArguments, r.ProposedRisk,
			r.Class, r.Decision, r.DecidedBy, r.Reason, r.Result, r.Error, r.DurationMS, r.PrevHash, r.Hash); err != nil {
			t.Fatal(err)
		}
		prev = r.Hash
	}
	l := open(t, path)
	seed(t, l, 2)
	rep, err := l.Verify(context.Background())
	if err != nil || !rep.OK || rep.Rows != 5 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "rows 1 to 3 predate the keyed chain") {
		t.Fatalf("legacy log: %+v %v", rep, err)
	}
	plainChain(t, path, 2, func(r *row) { r.Result = "forged" })
	rep, _ = l.Verify(context.Background())
	if rep.OK || rep.FirstBadID != 4 {
		t.Fatalf("rewritten legacy rows: %+v", rep)
	}
}
