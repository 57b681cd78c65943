package approved

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestApproveCheckLast(t *testing.T) {
	data := t.TempDir()
	s, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(Dir(data)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store folder: %v %v", fi, err)
	}
	if ok, err := s.Check("config.json", []byte("{}")); ok || err != nil {
		t.Fatalf("nothing approved yet: ok=%v err=%v", ok, err)
	}
	if _, ok, err := s.Last("config.json"); ok || err != nil {
		t.Fatalf("Last before any approval: ok=%v err=%v", ok, err)
	}
	if err := s.Approve("config.json", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Check("config.json", []byte(`{"a":1}`)); !ok {
		t.Fatal("approved content not recognised")
	}
	if ok, _ := s.Check("config.json", []byte(`{"a":2}`)); ok {
		t.Fatal("changed content taken as approved")
	}
	if ok, _ := s.Check("mcp.json", []byte(`{"a":1}`)); ok {
		t.Fatal("names share approvals")
	}
	last, ok, err := s.Last("config.json")
	if err != nil || !ok || string(last) != `{"a":1}` {
		t.Fatalf("Last = %q %v %v", last, ok, err)
	}
	fi, err := os.Stat(filepath.Join(Dir(data), "config.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approved file mode: %v %v", fi, err)
	}
	// A second Open sees the same approvals (another process, a restart).
	s2, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s2.Check("config.json", []byte(`{"a":1}`)); !ok {
		t.Fatal("approval not kept across Open")
	}
}

func TestApproveHashRefusesASwap(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shown := []byte(`{"x":"benign"}`)
	now := []byte(`{"x":"swapped"}`)
	if err := s.ApproveHash("mcp.json", now, Hash(shown)); !errors.Is(err, ErrChanged) {
		t.Fatalf("approval of swapped content: %v", err)
	}
	if ok, _ := s.Check("mcp.json", now); ok {
		t.Fatal("swapped content approved")
	}
	if err := s.ApproveHash("mcp.json", shown, Hash(shown)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Check("mcp.json", shown); !ok {
		t.Fatal("shown content not approved")
	}
}

func TestBadNames(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"", "../x", "a/b", ".hidden", "UPPER"} {
		if err := s.Approve(n, nil); err == nil {
			t.Errorf("name %q accepted", n)
		}
	}
}
