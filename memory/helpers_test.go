//go:build sqlite_fts5

package memory

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedNow is the injected clock of most tests: 2026-02-11 10:00 local.
var fixedNow = time.Date(2026, 2, 11, 10, 0, 0, 0, time.Local)

func openStore(t testing.TB, root string, mod func(*Options)) *Store {
	t.Helper()
	opts := Options{Root: root, Now: func() time.Time { return fixedNow }}
	if mod != nil {
		mod(&opts)
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fileLines reads a file's lines independently of splitLines, with
// bufio.ScanLines (which also treats "\r\n" as one break), so the tests
// check line numbers against a second implementation.
func fileLines(t testing.TB, root, rel string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// checkResult asserts that a result's line range names real lines of its
// file and that the excerpt is exactly those lines (or, for one long line,
// a cut of it).
func checkResult(t testing.TB, root string, r Result) {
	t.Helper()
	lines := fileLines(t, root, r.Path)
	if r.LineStart < 1 || r.LineEnd < r.LineStart || r.LineEnd > len(lines) {
		t.Fatalf("result %s:%d-%d out of range (file has %d lines)", r.Path, r.LineStart, r.LineEnd, len(lines))
	}
	want := strings.Join(lines[r.LineStart-1:r.LineEnd], "\n")
	if r.Excerpt == want {
		return
	}
	cut := strings.TrimSuffix(strings.TrimPrefix(r.Excerpt, "…"), "…")
	if r.LineStart == r.LineEnd && cut != r.Excerpt && strings.Contains(want, cut) {
		return
	}
	t.Fatalf("excerpt of %s:%d-%d does not match the file\nexcerpt: %q\nfile:    %q", r.Path, r.LineStart, r.LineEnd, r.Excerpt, want)
}

func search(t testing.TB, s *Store, q, kind string) []Result {
	t.Helper()
	res, err := s.Search(context.Background(), q, kind, 20)
	if err != nil {
		t.Fatalf("Search(%q, %q): %v", q, kind, err)
	}
	return res
}

// waitFor polls until cond holds or the deadline passes.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasPath(res []Result, path string) bool {
	for _, r := range res {
		if r.Path == path {
			return true
		}
	}
	return false
}
