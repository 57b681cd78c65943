package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The corpus is the same for the same seed, every gold line holds the
// answer, and no paraphrase question shares a content word with its answer.
func TestCorpus(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	qa, size, err := corpus(a, 7, 45)
	if err != nil {
		t.Fatal(err)
	}
	qb, _, err := corpus(b, 7, 45)
	if err != nil {
		t.Fatal(err)
	}
	if len(qa) != 150 || size < 1e6 {
		t.Fatalf("%d questions, %d bytes", len(qa), size)
	}
	for i := range qa {
		if qa[i].Q != qb[i].Q || qa[i].Path != qb[i].Path || qa[i].Line != qb[i].Line {
			t.Fatalf("question %d differs between runs: %+v / %+v", i, qa[i], qb[i])
		}
	}
	for _, name := range []string{"2025-01-01.md", "2025-12-31.md", "MEMORY.md"} {
		x, _ := os.ReadFile(filepath.Join(a, "memory", name))
		y, _ := os.ReadFile(filepath.Join(b, "memory", name))
		if len(x) == 0 || string(x) != string(y) {
			t.Fatalf("%s differs between runs", name)
		}
	}
	lineAt := func(l loc) string {
		data, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(l.Path)))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(data), "\n")[l.Line-1]
	}
	kinds := map[string]int{}
	for _, q := range qa {
		kinds[q.Kind]++
		gold := lineAt(loc{q.Path, q.Line})
		switch q.Kind {
		case "paraphrase":
			for _, w := range contentWords(q.Q) {
				for _, g := range contentWords(gold) {
					if strings.EqualFold(w, g) {
						t.Errorf("%q shares %q with %q", q.Q, w, gold)
					}
				}
			}
		case "update":
			if len(q.Older) == 0 {
				t.Errorf("%q has no older statement", q.Q)
			}
			for _, o := range q.Older {
				if o.Path >= q.Path {
					t.Errorf("%q: older statement %s not before %s", q.Q, o.Path, q.Path)
				}
			}
		}
		if strings.TrimSpace(gold) == "" {
			t.Errorf("%q: gold line %s:%d is blank", q.Q, q.Path, q.Line)
		}
	}
	if kinds["keyword"] != 50 || kinds["paraphrase"] != 50 || kinds["update"] != 50 {
		t.Fatalf("kinds %v", kinds)
	}
}
