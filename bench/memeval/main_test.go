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
	var updates []question
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
			for i, o := range q.Older {
				if o.Path >= q.Path {
					t.Errorf("%q: older statement %s not before %s", q.Q, o.Path, q.Path)
				}
				if !strings.Contains(lineAt(o), q.Values[i]) {
					t.Errorf("%q: older statement %q lacks %q", q.Q, lineAt(o), q.Values[i])
				}
			}
			// Fair: the gold line states the newest value, and the
			// question gives away none of the values.
			newest := q.Values[len(q.Values)-1]
			if len(q.Values) != len(q.Older)+1 || !strings.Contains(gold, newest) {
				t.Errorf("%q: gold %q does not state %q", q.Q, gold, newest)
			}
			for _, v := range q.Values {
				if strings.Contains(strings.ToLower(q.Q), strings.ToLower(v)) {
					t.Errorf("%q gives away the value %q", q.Q, v)
				}
			}
			updates = append(updates, q)
		}
		if strings.TrimSpace(gold) == "" {
			t.Errorf("%q: gold line %s:%d is blank", q.Q, q.Path, q.Line)
		}
	}
	if kinds["keyword"] != 50 || kinds["paraphrase"] != 50 || kinds["update"] != 50 {
		t.Fatalf("kinds %v", kinds)
	}
	// Fair: no note dated after an update question's gold line states a
	// value of that owner's fact (later lines only mention the topic).
	files, err := os.ReadDir(filepath.Join(a, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range updates {
		subject := subjectPhrase(q.Q) // "my dentist", "ana's son"
		if subject == "" {
			t.Fatalf("%q names no owner's subject", q.Q)
		}
		for _, f := range files {
			if rel := "memory/" + f.Name(); rel > q.Path && f.Name() != "MEMORY.md" {
				data, err := os.ReadFile(filepath.Join(a, "memory", f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range strings.Split(string(data), "\n") {
					for _, v := range q.Values {
						if strings.Contains(l, v) && strings.Contains(strings.ToLower(l), subject) {
							t.Errorf("%q: %s states %q after the gold line: %q", q.Q, rel, v, l)
						}
					}
				}
			}
		}
	}
}

// subjectPhrase is an update question's owner and the word after it, lower
// case: "Who is Ana's dentist now?" -> "ana's dentist".
func subjectPhrase(q string) string {
	f := strings.Fields(strings.ToLower(q))
	for i, w := range f[:len(f)-1] {
		if w == "my" || strings.HasSuffix(w, "'s") {
			return w + " " + strings.TrimSuffix(strings.Trim(f[i+1], "?"), "'s")
		}
	}
	return ""
}
