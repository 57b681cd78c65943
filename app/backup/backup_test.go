package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/app/audit"
	"jarvis/app/backup"
	"jarvis/internal/testwait"
	"jarvis/service/store"
)

// paths makes a data dir, a config folder and an audit key dir under root.
func paths(t *testing.T, root string) backup.Paths {
	t.Helper()
	p := backup.Paths{DataDir: filepath.Join(root, "data"), ConfigPath: filepath.Join(root, "config", "config.json"),
		MCPConfig: filepath.Join(root, "config", "mcp.json"), AuditKeyDir: filepath.Join(root, "config", "audit")}
	for _, d := range []string{p.DataDir, filepath.Dir(p.ConfigPath), p.AuditKeyDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func archiveNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// A backup taken while a turn streams into the conversations and tool calls
// are audited is one consistent archive without secrets; restored on "a new
// machine" (other folders) it refuses to overwrite without --force, its
// conversations open, and its audit chain verifies once the key, which
// travels apart, is there.
func TestBackupWhileRunningRestoreAndVerify(t *testing.T) {
	ctx := context.Background()
	src := paths(t, t.TempDir())
	st, err := store.Open(ctx, filepath.Join(src.DataDir, "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_done", AgentID: "general", Name: "Lisbon trip"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Message{{SessionID: "g_done", Role: "user", Content: "Plan a trip to Lisbon"}, {SessionID: "g_done", Role: "assistant", Content: "Take tram 28 early."}} {
		if _, err := st.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "g_live", AgentID: "general"}); err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(filepath.Join(src.DataDir, "audit.db"), audit.Options{KeyDir: src.AuditKeyDir})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	write(t, filepath.Join(src.DataDir, "memory", "MEMORY.md"), "- The user likes trams.\n")
	write(t, filepath.Join(src.DataDir, "memory", "2026-11-28.md"), "- Went to Lisbon.\n")
	write(t, filepath.Join(src.DataDir, "policy.json"), `{"rules":[]}`)
	write(t, filepath.Join(src.DataDir, "token"), "secret-service-token")
	write(t, src.ConfigPath, `{"agents":[]}`)
	write(t, src.MCPConfig, `{"mcpServers":{}}`)

	// The running turn: a user message, then deltas until told to stop;
	// and tool calls audited meanwhile.
	var seq int64
	next := func(string, func() (int64, error)) int64 { seq++; return seq }
	user := &store.Message{SessionID: "g_live", Role: "user", Content: "Write a long story"}
	if errs, err := st.AppendEvents(ctx, []store.EventWrite{{Event: store.Event{SessionID: "g_live", Type: "user.message", Data: `{"text":"Write a long story","turn_id":"t_live"}`, CreatedAt: store.Timestamp(time.Now())},
		Write: st.StartTurn("t_live", "", user, "")}}, next); err != nil || errs[0] != nil {
		t.Fatal(err, errs)
	}
	stop := make(chan struct{})
	var deltas, audited atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := st.AppendEvents(ctx, []store.EventWrite{{Event: store.Event{SessionID: "g_live", Type: "assistant.delta", Data: `{"text":"once upon a time ","turn_id":"t_live"}`}}}, next); err != nil {
				t.Error(err)
				return
			}
			deltas.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := log.Append(ctx, audit.Entry{SessionID: "g_live", Tool: "read_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"f%d"}`, i)),
				Class: "read", Decision: audit.Allowed, DecidedBy: audit.ByPolicy}); err != nil {
				t.Error(err)
				return
			}
			audited.Add(1)
			// Tool calls come one at a time, not back to back: a writer
			// that takes SQLite's lock again the instant it frees it
			// starves another connection's BEGIN IMMEDIATE (SQLite keeps
			// no queue; the backup's waited 10 s and failed once in CI-like
			// runs with "database is locked").
			time.Sleep(time.Millisecond)
		}
	}()
	testwait.Until(t, "the turn streaming and tool calls being audited", 30*time.Second, func() bool { return deltas.Load() > 20 && audited.Load() > 5 })
	archive := filepath.Join(t.TempDir(), "jarvis-backup.tar.gz")
	m, err := backup.Backup(ctx, src, archive)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Backup(ctx, src, archive); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a second backup to the same file: %v", err)
	}
	names := archiveNames(t, archive)
	want := []string{"manifest.json", "data/jarvis.db", "audit/anchor.json", "data/audit.db", "data/policy.json", "data/memory/MEMORY.md", "data/memory/2026-11-28.md", "config/config.json", "config/mcp.json"}
	for _, w := range want {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+w+" ") {
			t.Fatalf("the archive lacks %s: %v", w, names)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "token") || strings.HasSuffix(n, "/key") || strings.Contains(n, "secret") {
			t.Fatalf("the archive holds a secret: %s", n)
		}
	}
	if len(m.LeftOut) == 0 || !strings.Contains(m.LeftOut[0], "keyring") {
		t.Fatalf("the manifest does not say secrets are left out: %+v", m.LeftOut)
	}

	// A new machine: other folders, no audit key yet.
	dst := paths(t, t.TempDir())
	r, err := backup.Restore(ctx, dst, archive, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != len(want)-1 {
		t.Fatalf("restored %v", r.Files)
	}
	if msg, ok := backup.VerifyAudit(ctx, dst, nil); ok || !strings.Contains(msg, "key") {
		t.Fatalf("without its key the audit log verified: %q", msg)
	}
	// The key travels apart (here: the key file, as without a keyring).
	key, err := os.ReadFile(filepath.Join(src.AuditKeyDir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dst.AuditKeyDir, "key"), string(key))
	msg, ok := backup.VerifyAudit(ctx, dst, nil)
	if !ok || !strings.Contains(msg, "verifies") {
		t.Fatalf("the restored audit log: %q", msg)
	}
	t.Log(msg)

	rst, err := store.Open(ctx, filepath.Join(dst.DataDir, "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rst.IntegrityCheck(ctx); err != nil || v != "ok" {
		t.Fatalf("integrity %q %v", v, err)
	}
	msgs, err := rst.Messages(ctx, "g_done")
	if err != nil || len(msgs) != 2 || msgs[1].Content != "Take tram 28 early." {
		t.Fatalf("restored transcript %+v %v", msgs, err)
	}
	if live, err := rst.Messages(ctx, "g_live"); err != nil || len(live) != 1 {
		t.Fatalf("the running turn's user message: %+v %v", live, err)
	}
	if hits, err := rst.SearchSessions(ctx, "lisbon", "", 0); err != nil || len(hits) != 1 {
		t.Fatalf("search in the restored conversations: %+v %v", hits, err)
	}
	rst.Close()
	if b, err := os.ReadFile(filepath.Join(dst.DataDir, "memory", "MEMORY.md")); err != nil || string(b) != "- The user likes trams.\n" {
		t.Fatalf("memory: %q %v", b, err)
	}

	// Again: refused without --force, nothing touched; replaced with it.
	write(t, dst.ConfigPath, `{"agents":["changed"]}`)
	if _, err := backup.Restore(ctx, dst, archive, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore over existing files: %v", err)
	}
	if b, _ := os.ReadFile(dst.ConfigPath); string(b) != `{"agents":["changed"]}` {
		t.Fatalf("a refused restore changed %s: %s", dst.ConfigPath, b)
	}
	if _, err := backup.Restore(ctx, dst, archive, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst.ConfigPath); string(b) != `{"agents":[]}` {
		t.Fatalf("--force did not restore %s: %s", dst.ConfigPath, b)
	}
	if _, ok := backup.VerifyAudit(ctx, dst, nil); !ok {
		t.Fatal("the audit log does not verify after the forced restore")
	}

	// Not a backup at all.
	junk := filepath.Join(t.TempDir(), "junk.tar.gz")
	write(t, junk, "hello")
	if _, err := backup.Restore(ctx, dst, junk, true); err == nil || !strings.Contains(err.Error(), "not a Jarvis backup") {
		t.Fatalf("restore of junk: %v", err)
	}
}

// Every conversation exports as Markdown and as JSON, deleted ones not,
// while the database is open for writing.
func TestExportAll(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "jarvis.db")
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, s := range []store.Session{{ID: "g_a", AgentID: "general", Name: "Trip"}, {ID: "g_b", AgentID: "coder"}, {ID: "g_gone", AgentID: "general"}} {
		if _, err := st.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []store.Message{
		{SessionID: "g_a", Role: "user", Content: "Plan a trip to Lisbon"},
		{SessionID: "g_a", Role: "assistant", ToolCalls: `[{"id":"c1","function":{"name":"read_file"}}]`},
		{SessionID: "g_a", Role: "tool", ToolCallID: "c1", Content: "notes with ``` fences"},
		{SessionID: "g_a", Role: "assistant", Content: "Take tram 28."},
		{SessionID: "g_b", Role: "user", Content: "Fix the bug"},
		{SessionID: "g_gone", Role: "user", Content: "forget me"},
	} {
		if _, err := st.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteSession(ctx, "g_gone"); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "all.json")
	if n, err := backup.Export(ctx, db, "json", js); err != nil || n != 2 {
		t.Fatalf("json export: %d %v", n, err)
	}
	raw, _ := os.ReadFile(js)
	var got struct{ Conversations []backup.Conversation }
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Conversations) != 2 || got.Conversations[0].ID != "g_a" || len(got.Conversations[0].Messages) != 4 ||
		got.Conversations[0].Messages[3].Content != "Take tram 28." || !bytes.Contains(got.Conversations[0].Messages[1].ToolCalls, []byte("read_file")) {
		t.Fatalf("json export: %s", raw)
	}
	md := filepath.Join(dir, "all.md")
	if n, err := backup.Export(ctx, db, "md", md); err != nil || n != 2 {
		t.Fatalf("md export: %d %v", n, err)
	}
	b, _ := os.ReadFile(md)
	for _, w := range []string{"## Trip", "Plan a trip to Lisbon", "Take tram 28.", "````\nnotes with ``` fences\n````", "Fix the bug"} {
		if !strings.Contains(string(b), w) {
			t.Fatalf("markdown lacks %q:\n%s", w, b)
		}
	}
	if strings.Contains(string(b), "forget me") {
		t.Fatal("a deleted conversation was exported")
	}
	if fi, _ := os.Stat(md); fi.Mode().Perm() != 0o600 {
		t.Fatalf("export mode %v", fi.Mode())
	}
	if _, err := backup.Export(ctx, db, "pdf", md); err == nil || !strings.Contains(err.Error(), "md or json") {
		t.Fatalf("unknown format: %v", err)
	}
}

// An archive naming a file outside what a backup makes is refused whole:
// nothing of it is written.
func TestRestoreRefusesForeignNames(t *testing.T) {
	ctx := context.Background()
	dst := paths(t, t.TempDir())
	for _, bad := range []string{"data/../../evil.sh", "config/other.json", "/etc/passwd", "data/memory/../../../x"} {
		file := filepath.Join(t.TempDir(), "b.tar.gz")
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, e := range []struct{ name, body string }{
			{"manifest.json", `{"format":1}`},
			{"data/policy.json", `{}`},
			{bad, "pwned"},
		} {
			tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o600, Size: int64(len(e.body)), Typeflag: tar.TypeReg})
			tw.Write([]byte(e.body))
		}
		tw.Close()
		zw.Close()
		write(t, file, buf.String())
		if _, err := backup.Restore(ctx, dst, file, true); err == nil || !strings.Contains(err.Error(), "not a path a backup makes") {
			t.Fatalf("%s: %v", bad, err)
		}
		if _, err := os.Stat(filepath.Join(dst.DataDir, "policy.json")); err == nil {
			t.Fatalf("%s: a refused archive wrote policy.json", bad)
		}
	}
}
