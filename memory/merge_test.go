//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Writes leave small full-text segments; mergeSegments merges them (the
// index holds fewer pages) and every note stays findable.
func TestMergeSegments(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "# Notes\n\nThe locker code is 4711.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-"; o.DisableWatcher = true })
	ctx := context.Background()
	for i := range 30 {
		if _, err := s.Write(ctx, TargetLongTerm, fmt.Sprintf("Fact number %d: word%d.", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	pages := func() int {
		var n int
		if err := s.rdb.QueryRow(`SELECT count(*) FROM chunks_fts_data`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pages()
	more, err := s.mergeSegments(ctx, time.Minute)
	if err != nil || more {
		t.Fatalf("mergeSegments = %v, %v; want all merged", more, err)
	}
	if after := pages(); after >= before {
		t.Fatalf("index pages %d before the merge, %d after: nothing merged", before, after)
	}
	if more, err := s.mergeSegments(ctx, time.Minute); err != nil || more {
		t.Fatalf("second merge = %v, %v", more, err)
	}
	for _, q := range []string{"word0", "word17", "word29", "locker code"} {
		if res := search(t, s, q, ""); len(res) != 1 || !strings.Contains(res[0].Excerpt, strings.Fields(q)[0]) {
			t.Fatalf("%q after the merge: %+v", q, res)
		}
	}
}
