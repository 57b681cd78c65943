package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Without synonyms, each phrasing finds only its own note; together they
// find both, and the note two phrasings find ranks first.
func TestSearchAnyFusesPhrasings(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2026-01-05.md", "# 2026-01-05\n\nBought a couch for the living room.\n\nThe settee in the hall needs cleaning.\n\nA sofa and a couch were on sale at the market.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	ctx := context.Background()
	if got := search(t, s, "settee", ""); len(got) != 1 {
		t.Fatalf("settee alone: %d results, want 1", len(got))
	}
	res, err := s.SearchAny(ctx, []string{"settee", " sofa ", "sofa", "", "couch"}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want the three notes: %+v", len(res), res)
	}
	if !strings.Contains(res[0].Excerpt, "sofa and a couch") {
		t.Errorf("first %q, want the note both sofa and couch find", res[0].Excerpt)
	}
	for _, r := range res {
		checkResult(t, root, r)
	}
	one, err := s.SearchAny(ctx, []string{"settee"}, "", 10)
	if err != nil || len(one) != 1 {
		t.Fatalf("one phrasing: %v %+v", err, one)
	}
	if _, err := s.SearchAny(ctx, []string{"a", "b", "c", "d", "e", "f"}, "", 10); !errors.Is(err, ErrInvalidQuery) || !strings.Contains(err.Error(), "at most 5") {
		t.Fatalf("six phrasings: %v", err)
	}
	if res, err := s.SearchAny(ctx, nil, "", 10); err != nil || len(res) != 0 {
		t.Fatalf("no phrasing: %v %+v", err, res)
	}
}
