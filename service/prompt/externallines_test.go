package prompt

import "testing"

// TestExternalLines: lines under a mark with external="yes" or "unknown"
// are the entry's, for as many lines as the mark says; lines under no mark,
// or past the entry, are the user's own.
func TestExternalLines(t *testing.T) {
	text := "# Long-term memory\n" + // 1
		"\n" + // 2
		`<!-- jarvis-entry agent="a" at="2026-01-01T00:00:00Z" external="yes" lines="2" -->` + "\n" + // 3
		"from a web page\n" + // 4
		"still the entry\n" + // 5
		"written by hand\n" + // 6
		`<!-- jarvis-entry agent="a" at="2026-01-01T00:00:00Z" external="no" lines="1" -->` + "\n" + // 7
		"the user's fact\n" + // 8
		`<!-- jarvis-entry agent="a" at="2026-01-01T00:00:00Z" external="unknown" lines="1" -->` + "\n" + // 9
		"an old entry\n" // 10
	for _, c := range []struct {
		from, to int
		want     bool
	}{{1, 2, false}, {4, 4, true}, {5, 6, true}, {6, 6, false}, {8, 8, false}, {6, 8, false}, {10, 10, true}, {1, 10, true}} {
		if got := ExternalLines(text, c.from, c.to); got != c.want {
			t.Errorf("lines %d-%d: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
