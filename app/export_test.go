package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/service/store"
)

// A conversation export lands where the user chose, as given, mode 0600;
// a cancelled dialog writes nothing; bad input is refused in words.
func TestExportConversation(t *testing.T) {
	dir := t.TempDir()
	var asked string
	choose := filepath.Join(dir, "mine.md")
	a, _ := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}, SaveFile: func(name string) (string, error) {
		asked = name
		return choose, nil
	}})
	x, err := a.ExportConversation("j_1/../x", "md", "# Trip\n\n**You:** hi\n")
	if err != nil || x.Path != choose || x.Bytes != 20 {
		t.Fatalf("export %+v, %v", x, err)
	}
	if !strings.HasPrefix(asked, "conversation-j_1_x-") || !strings.HasSuffix(asked, ".md") {
		t.Fatalf("suggested name %q", asked)
	}
	b, err := os.ReadFile(choose)
	if err != nil || string(b) != "# Trip\n\n**You:** hi\n" {
		t.Fatalf("file %q, %v", b, err)
	}
	if fi, _ := os.Stat(choose); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if _, err := a.ExportConversation("s", "json", "{not json"); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("bad json: %v", err)
	}
	if _, err := a.ExportConversation("s", "pdf", "x"); err == nil || !strings.Contains(err.Error(), "unknown export format") {
		t.Fatalf("bad format: %v", err)
	}
	choose = ""
	if x, err := a.ExportConversation("s", "json", "[]"); err != nil || !x.Cancelled {
		t.Fatalf("cancelled: %+v, %v", x, err)
	}
}

// Export all: every conversation of the data dir's database, where the user
// chose; a cancelled dialog writes nothing.
func TestExportAllConversations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, id := range []string{"g_1", "g_2"} {
		if _, err := st.CreateSession(ctx, store.Session{ID: id, AgentID: "general", Name: fmt.Sprintf("Talk %d", i+1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddMessage(ctx, store.Message{SessionID: id, Role: "user", Content: "hello from " + id}); err != nil {
			t.Fatal(err)
		}
	}
	choose := filepath.Join(dir, "all.md")
	a, _ := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}, DataDir: dir,
		SaveFile: func(string) (string, error) { return choose, nil }})
	x, err := a.ExportAllConversations("md")
	if err != nil || x.Path != choose || x.Conversations != 2 || x.Bytes == 0 {
		t.Fatalf("export %+v, %v", x, err)
	}
	b, _ := os.ReadFile(choose)
	if !strings.Contains(string(b), "## Talk 1") || !strings.Contains(string(b), "hello from g_2") {
		t.Fatalf("export:\n%s", b)
	}
	if _, err := a.ExportAllConversations("pdf"); err == nil || !strings.Contains(err.Error(), "unknown export format") {
		t.Fatalf("bad format: %v", err)
	}
	choose = ""
	if x, err := a.ExportAllConversations("json"); err != nil || !x.Cancelled {
		t.Fatalf("cancelled: %+v, %v", x, err)
	}
}
