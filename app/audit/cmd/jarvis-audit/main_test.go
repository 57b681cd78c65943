package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/app/audit"
)

func TestVerifyAndExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"read_file", "notify", "read_file"} {
		_, err := l.Append(context.Background(), audit.Entry{Tool: tool, Arguments: json.RawMessage(`{}`), Class: "safe", Decision: audit.Allowed, DecidedBy: audit.ByPolicy})
		if err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	var out, errb bytes.Buffer
	if code := run([]string{"verify", "-db", path}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"ok": true`) {
		t.Fatalf("verify: %d %s %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"export", "-db", path, "-tool", "read_file"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 2 {
		t.Fatalf("export: %d %q", code, out.String())
	}

	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET tool = 'run_command' WHERE id = 2`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out.Reset()
	errb.Reset()
	if code := run([]string{"verify", "-db", path}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "row 2") {
		t.Fatalf("tampered verify: %d %s %s", code, out.String(), errb.String())
	}
	if code := run([]string{"verify", "-db", path + ".typo"}, &out, &errb); code != 1 {
		t.Fatalf("missing file: %d", code)
	}
	if code := run([]string{"nope"}, &out, &errb); code != 2 {
		t.Fatalf("bad usage: %d", code)
	}
}
