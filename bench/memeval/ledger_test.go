package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/memory"
)

// The ledger corpus is fair in the same ways as the diary (TestCorpus) and
// independent of it: the same for the same seed, each gold line holds its
// answer, paraphrases share no content word with their note, an update's
// older lines hold the older values and its gold line the newest, no note
// after the gold line states any of its values, and every statement form
// shares a content word with its question.
func TestLedgerCorpus(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	qa, size, err := ledger(a, 7, 45)
	if err != nil {
		t.Fatal(err)
	}
	qb, _, err := ledger(b, 7, 45)
	if err != nil {
		t.Fatal(err)
	}
	if size < 5e5 {
		t.Fatalf("%d bytes", size)
	}
	for i := range qa {
		if qa[i].Q != qb[i].Q || qa[i].Path != qb[i].Path || qa[i].Line != qb[i].Line {
			t.Fatalf("question %d differs between runs: %+v / %+v", i, qa[i], qb[i])
		}
	}
	files := map[string][]string{}
	lineAt := func(l loc) string {
		if files[l.Path] == nil {
			data, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(l.Path)))
			if err != nil {
				t.Fatal(err)
			}
			files[l.Path] = strings.Split(string(data), "\n")
		}
		return files[l.Path][l.Line-1]
	}
	kinds := map[string]int{}
	shapes := map[string]int{}
	for _, q := range qa {
		kinds[q.Kind]++
		gold := lineAt(loc{q.Path, q.Line})
		if strings.TrimSpace(gold) == "" {
			t.Fatalf("%q: gold line %s:%d is blank", q.Q, q.Path, q.Line)
		}
		switch q.Kind {
		case "keyword":
			name := ""
			for _, w := range contentWords(q.Q) {
				if strings.Contains(gold, w) && w[0] >= 'A' && w[0] <= 'Z' {
					name = w
				}
			}
			if name == "" {
				t.Errorf("%q: its name is not on the gold line %q", q.Q, gold)
			}
		case "paraphrase":
			for _, w := range contentWords(q.Q) {
				for _, g := range contentWords(gold) {
					if strings.EqualFold(w, g) {
						t.Errorf("%q shares %q with %q", q.Q, w, gold)
					}
				}
			}
		case "update":
			if len(q.Older) == 0 || len(q.Values) != len(q.Older)+1 {
				t.Fatalf("%q: %d older statements, %d values", q.Q, len(q.Older), len(q.Values))
			}
			for i, o := range q.Older {
				if o.Path >= q.Path || !strings.Contains(lineAt(o), q.Values[i]) {
					t.Errorf("%q: older statement %s %q (want before %s, holding %q)", q.Q, o.Path, lineAt(o), q.Path, q.Values[i])
				}
			}
			if !strings.Contains(gold, q.Values[len(q.Values)-1]) {
				t.Errorf("%q: gold %q does not state the newest value", q.Q, gold)
			}
			for _, v := range q.Values {
				if strings.Contains(strings.ToLower(q.Q), strings.ToLower(v)) {
					t.Errorf("%q gives away %q", q.Q, v)
				}
			}
			switch {
			case strings.HasPrefix(gold, "- "):
				shapes["list"]++
			case strings.HasPrefix(gold, "| "):
				shapes["table"]++
			case strings.Contains(strings.ToLower(gold), "user"):
				shapes["third person"]++
			}
			// No later note states one of the values (of this owner's
			// fact: owners of one topic draw from the same values).
			entries, _ := os.ReadDir(filepath.Join(a, "memory"))
			for _, e := range entries {
				rel := "memory/" + e.Name()
				if rel <= q.Path || e.Name() == "MEMORY.md" {
					continue
				}
				data, _ := os.ReadFile(filepath.Join(a, "memory", e.Name()))
				for _, l := range strings.Split(string(data), "\n") {
					for _, v := range q.Values {
						if strings.Contains(l, v) && strings.Contains(l, q.Owner) {
							t.Errorf("%q: %s states %q after the gold line: %q", q.Q, rel, v, l)
						}
					}
				}
			}
		}
	}
	if kinds["keyword"] != 50 || kinds["paraphrase"] != len(ledgerParaphrases) || kinds["update"] < 20 {
		t.Fatalf("kinds %v", kinds)
	}
	if len(shapes) < 2 {
		t.Errorf("gold lines of updates in shapes %v: want lists, tables and third-person notes among them", shapes)
	}
	// Every statement form shares a content word (by stem) with its
	// question: an update question tests ordering, not paraphrase.
	for _, f := range ledgerFacts {
		for _, form := range append(append([]string{}, f.states...), f.changes...) {
			if !sharesStem(f.q, form) {
				t.Errorf("%q shares no word with %q", form, f.q)
			}
		}
	}
	// Independent of the diary: no question of one is a question of the other.
	diary, _, err := corpus(t.TempDir(), 7, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diary {
		for _, l := range qa {
			if strings.EqualFold(d.Q, l.Q) {
				t.Errorf("both corpora ask %q", d.Q)
			}
		}
	}
}

func sharesStem(q, form string) bool {
	for _, w := range contentWords(q) {
		w = strings.ToLower(w)
		if memory.IsStopWord(w) || w == "{o}" || len(w) < 3 {
			continue
		}
		stem := w[:min(len(w), 4)]
		for _, g := range contentWords(strings.NewReplacer("{o}", "", "{v}", "").Replace(form)) {
			if strings.HasPrefix(strings.ToLower(g), stem) {
				return true
			}
		}
	}
	return false
}
