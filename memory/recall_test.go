//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
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

// One long conversation is indexed as several passages. When the next
// passage of a result also matches, it is joined to that result (lines
// that follow on) and the place goes to another note.
func TestSearchJoinsAdjacentPassages(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("# 2026-01-05\n\n")
	for i := range 24 {
		fmt.Fprintf(&b, "Ana: line %02d of a long chat about the pottery class, the kiln, glazes, the bowls we made there and the mugs we will glaze next week at the studio.\n", i)
	}
	writeFile(t, root, "memory/2026-01-05.md", b.String())
	writeFile(t, root, "memory/2026-01-09.md", "# 2026-01-09\n\nAna: The pottery class got me a new wheel.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	res, err := s.Search(context.Background(), "pottery class", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		checkResult(t, root, r)
		got = append(got, fmt.Sprintf("%s:%d-%d", r.Path, r.LineStart, r.LineEnd))
	}
	if len(res) != 2 || res[0].Path == res[1].Path {
		t.Fatalf("results %v, want the long chat (joined) and the other note", got)
	}
	for _, r := range res {
		if r.Path == "memory/2026-01-05.md" && r.LineEnd-r.LineStart+1 < 20 {
			t.Errorf("chat result %s:%d-%d, want its adjacent passages joined", r.Path, r.LineStart, r.LineEnd)
		}
	}
}

// TestSearchWindowRunsIntoTheNextPassage: a long conversation is indexed
// as passages of about 2,000 bytes; the question's words are on the last
// turn of one passage and the answer is the first turn of the next. The
// result's window is the matching turn with its neighbours in the whole
// conversation, so it holds the answer; and the other passage, a result
// of its own, is joined to it, not shown twice.
func TestSearchWindowRunsIntoTheNextPassage(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("# 2026-02-03\n\n")
	for i := range 15 {
		fmt.Fprintf(&b, "Ben: small talk %02d about the weather, the traffic on the ring road and whether the bakery still sells rye bread on Sundays.\n", i)
	}
	b.WriteString("Ana: Which desserts did you bake for the street party in the end?\n")
	b.WriteString("Ben: A peach cobbler and a lemon tart, both gone within the hour.\n")
	for i := range 13 {
		fmt.Fprintf(&b, "Ana: more talk %02d about the new bus timetable, the library's opening hours and the noisy neighbours upstairs.\n", i)
	}
	writeFile(t, root, "memory/2026-02-03.md", b.String())
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	// The question's words sit at the end of the first passage.
	cs := chunkLines(splitLines(b.String()))
	if len(cs) < 2 || !strings.Contains(cs[0].Text, "street party") || strings.Contains(cs[0].Text, "cobbler") {
		t.Fatalf("the chat's passages do not cut between question and answer: %d passages", len(cs))
	}
	res, err := s.Search(context.Background(), "desserts street party", "", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		t.Fatal("no result")
	}
	checkResult(t, root, res[0])
	if !strings.Contains(res[0].Excerpt, "peach cobbler") {
		t.Fatalf("first result %s:%d-%d does not hold the answer, the next turn:\n%s", res[0].Path, res[0].LineStart, res[0].LineEnd, res[0].Excerpt)
	}
	for _, r := range res[1:] {
		checkResult(t, root, r)
		if r.Path == res[0].Path && r.LineStart <= res[0].LineEnd && res[0].LineStart <= r.LineEnd {
			t.Errorf("results overlap: %s:%d-%d and %d-%d", r.Path, res[0].LineStart, res[0].LineEnd, r.LineStart, r.LineEnd)
		}
	}
}
