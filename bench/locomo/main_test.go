package main

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The extract in testdata is written in LoCoMo's two file formats (one
// conversation per file, and locomo10.json's list of samples).
func TestLoadBothFormatsAndZip(t *testing.T) {
	one, err := load("testdata/extract.json")
	if err != nil {
		t.Fatal(err)
	}
	list, err := load("testdata/extract-list.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/extract.json")
	if err != nil {
		t.Fatal(err)
	}
	zpath := filepath.Join(t.TempDir(), "locomo.zip")
	f, err := os.Create(zpath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("data/multimodal_dialog/v2/26.json")
	w.Write(data)
	zw.Create("data/multimodal_dialog/v2/")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	zipped, err := load(zpath)
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string][]conversation{"file": one, "list": list, "zip": zipped} {
		if len(cs) != 1 {
			t.Fatalf("%s: %d conversations, want 1", name, len(cs))
		}
		c := cs[0]
		if len(c.Sessions) != 3 || len(c.QA) != 6 {
			t.Fatalf("%s: %d sessions (want 3: the empty one skipped), %d questions (want 6)", name, len(c.Sessions), len(c.QA))
		}
		if got := c.Sessions[0].Date.Format("2006-01-02 15:04"); got != "2024-03-03 09:15" {
			t.Errorf("%s: session 1 date %s", name, got)
		}
		if c.Sessions[0].Turns[2].Caption == "" {
			t.Errorf("%s: the photo caption was not read", name)
		}
	}
	if zipped[0].Name != "26" || list[0].Name != "conv-x" {
		t.Errorf("names %q, %q", zipped[0].Name, list[0].Name)
	}
}

func TestLoadErrorsSayWhat(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"session_1_date_time": "yesterday", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}`), 0o600)
	if _, err := load(bad); err == nil || !strings.Contains(err.Error(), `unreadable date "yesterday"`) {
		t.Fatalf("err = %v, want the unreadable date named", err)
	}
	if _, err := load(dir + "/missing.zip"); err == nil {
		t.Fatal("a missing file loaded")
	}
}

// Each turn is one line of the daily note of its session's date; sessions
// of one day share the file; the returned lines are where the turns are.
func TestNotesPutEachTurnOnItsLine(t *testing.T) {
	cs, err := load("testdata/extract.json")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	lines, err := writeNotes(root, cs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 7 {
		t.Fatalf("%d turns placed, want 7", len(lines))
	}
	files := map[string][]string{}
	for id, l := range lines {
		if files[l.Path] == nil {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(l.Path)))
			if err != nil {
				t.Fatal(err)
			}
			files[l.Path] = strings.Split(string(b), "\n")
		}
		if got := files[l.Path][l.Line-1]; got != l.Text {
			t.Errorf("%s: line %d of %s is %q, want %q", id, l.Line, l.Path, got, l.Text)
		}
	}
	if len(files) != 2 {
		t.Errorf("%d files, want 2 (the two March sessions share one)", len(files))
	}
	if l := lines["D1:3"]; l.Path != "memory/2024-03-03.md" || !strings.HasSuffix(l.Text, "[photo: a photo of a green bicycle leaning on a wall]") {
		t.Errorf("D1:3 = %+v", l)
	}
	q := cs[0].QA
	if ev := evidence(q[3], lines); len(ev) != 0 {
		t.Errorf("evidence %v from one malformed id, want none (the question is not asked)", ev)
	}
	if ev := evidence(q[5], lines); len(ev) != 1 || ev[0] != "D2:1" {
		t.Errorf("evidence %v, want the one id naming a turn", ev)
	}
}

// The whole run on the extract, through memory.Store.Search: the counts
// per category follow the rules (adversarial and evidence-less questions
// left out), the rare-word question is found by both, and the table has a
// row per category asked.
func TestRunOnExtract(t *testing.T) {
	res, err := run(context.Background(), config{data: "testdata/extract.json", k: 5, direct: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{4: 2, 1: 1, 2: 1}
	for c, n := range want {
		if res.cats[c] == nil || res.cats[c].n != n {
			t.Fatalf("category %s: %+v, want %d questions", categories[c], res.cats[c], n)
		}
	}
	if res.cats[3] != nil {
		t.Fatalf("open-domain asked %d times; its only question has no valid evidence", res.cats[3].n)
	}
	if s := res.cats[4]; s.any < 1 || s.bmAny < 1 {
		t.Errorf("single-hop %+v: the ferry question (its words on the evidence line) was not found", s)
	}
	tbl := res.table()
	for _, row := range []string{"| single-hop | 2 |", "| multi-hop | 1 |", "| temporal | 1 |", "| all | 4 |", "search latency: p50"} {
		if !strings.Contains(tbl, row) {
			t.Errorf("table lacks %q:\n%s", row, tbl)
		}
	}
}

func TestFoundCountsRanges(t *testing.T) {
	lines := map[string]loc{"a": {"memory/x.md", 3, ""}, "b": {"memory/x.md", 9, ""}, "c": {"memory/y.md", 3, ""}}
	got := []span{{Path: "memory/x.md", Start: 2, End: 4}, {Path: "memory/y.md", Start: 4, End: 6}}
	if n, _ := found([]string{"a", "b", "c"}, lines, got); n != 1 {
		t.Fatalf("found %d, want 1 (only x.md:3 lies in a range)", n)
	}
}

// -convs picks conversations by position, so tuning on one part and
// reporting on the other is one flag.
func TestPositionsSplitTheConversations(t *testing.T) {
	for s, want := range map[string][]int{"1-5": {1, 2, 3, 4, 5}, "6-10": {6, 7, 8, 9, 10}, "2, 4,9-10": {2, 4, 9, 10}, "7": {7}} {
		got, err := positions(s, 10)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if len(got) != len(want) {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
		for _, i := range want {
			if !got[i] {
				t.Errorf("%q: %d not picked (%v)", s, i, got)
			}
		}
	}
	if got, err := positions("", 10); got != nil || err != nil {
		t.Errorf("empty: %v, %v; want every conversation", got, err)
	}
	for _, bad := range []string{"0-5", "6-11", "5-1", "x", "1-"} {
		if _, err := positions(bad, 10); err == nil || !strings.Contains(err.Error(), "between 1 and 10") {
			t.Errorf("%q: err = %v, want it named", bad, err)
		}
	}
}

// -convs runs only the conversations at the given positions: of a folder
// of two, "2" asks the second one's questions only (as many as the
// extract has), and a position past the end is refused before any work.
// The table reports the text returned per question.
func TestRunPicksConversationsByPosition(t *testing.T) {
	data, err := os.ReadFile("testdata/extract.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	both, err := run(context.Background(), config{data: dir, k: 5, direct: true})
	if err != nil {
		t.Fatal(err)
	}
	second, err := run(context.Background(), config{data: dir, k: 5, direct: true, convs: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if both.convs != 2 || second.convs != 1 {
		t.Fatalf("conversations run: %d without -convs (want 2), %d with -convs 2 (want 1)", both.convs, second.convs)
	}
	for c, tl := range both.cats {
		if s := second.cats[c]; s == nil || 2*s.n != tl.n {
			t.Errorf("category %s: %+v of the second against %+v of both, want half", categories[c], s, tl)
		}
	}
	if second.bytes <= 0 || !strings.Contains(second.table(), "KB per question") {
		t.Errorf("returned text not counted (%d bytes):\n%s", second.bytes, second.table())
	}
	if _, err := run(context.Background(), config{data: dir, k: 5, direct: true, convs: "3"}); err == nil || !strings.Contains(err.Error(), "between 1 and 2") {
		t.Errorf("-convs 3 of 2 conversations: err = %v, want the range named", err)
	}
}
