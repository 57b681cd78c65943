//go:build sqlite_fts5

package memory

import (
	"strings"
	"testing"
)

// A question whose answer is spread over several notes: one note has all
// its words, the others some. Search fills its places with those, after
// the note with every word, and never with a note sharing no word.
func TestSearchFillsUpWithNotesHavingSomeWords(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2026-01-05.md", "# 2026-01-05\n\nAna says playing instruments calms her.\n")
	writeFile(t, root, "memory/2026-01-06.md", "# 2026-01-06\n\nAna plays the clarinet in a band.\n")
	writeFile(t, root, "memory/2026-01-07.md", "# 2026-01-07\n\nAna practised the violin all evening.\n")
	writeFile(t, root, "memory/2026-01-08.md", "# 2026-01-08\n\nBought bread and cheese.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	res := search(t, s, "What instruments does Ana play?", "")
	var got []string
	for _, r := range res {
		checkResult(t, root, r)
		got = append(got, r.Excerpt)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want the three notes about Ana: %q", len(res), got)
	}
	if !strings.Contains(got[0], "instruments") {
		t.Errorf("first %q, want the note with every word of the question", got[0])
	}
	if !strings.Contains(got[1], "clarinet") {
		t.Errorf("second %q, want the note with two of its words", got[1])
	}
	if !strings.Contains(got[2], "violin") {
		t.Errorf("third %q, want the note with one of its words", got[2])
	}
}
