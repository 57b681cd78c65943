package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
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
