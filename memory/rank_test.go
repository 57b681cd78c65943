//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jarvis_rank orders matches exactly as FTS5's own bm25() does, for one and
// several words, on notes of every length and with text the tokenizer has
// to split (punctuation, digits, accents, Markdown, non-Latin scripts).
func TestJarvisRankIsBM25(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("tea dentist garden invoice Zürich café naïve 2026 x86_64 東京 données über-cool e-mail C++ rust go")
	for i := 0; i < 60; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for j, n := 0, 1+rng.IntN(80); j < n; j++ {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString([]string{" ", ", ", ". ", " - ", "\n", " **", "** ", "/", "(", ") "}[rng.IntN(10)])
		}
		writeFile(t, root, fmt.Sprintf("memory/2026-01-%02d.md", 1+i%28), b.String()+"\n\n"+strings.Repeat("filler words here ", rng.IntN(30))+"tea\n")
	}
	s := openStore(t, root, nil)
	ctx := context.Background()
	for _, q := range []string{`"tea"`, `"dentist"`, `"zurich"`, `"東京"`, `"2026"`, `"tea" AND "garden"`, `"cafe" OR "invoice"`, `"rust"* AND "go"`, `"e" AND "mail"`} {
		order := func(fn string) ([]int64, []float64) {
			rows, err := s.rdb.QueryContext(ctx, `SELECT rowid, `+fn+` AS sc FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY sc, rowid`, q)
			if err != nil {
				t.Fatalf("%s %s: %v", fn, q, err)
			}
			defer rows.Close()
			var ids []int64
			var scores []float64
			for rows.Next() {
				var id int64
				var sc float64
				if err := rows.Scan(&id, &sc); err != nil {
					t.Fatal(err)
				}
				ids, scores = append(ids, id), append(scores, sc)
			}
			return ids, scores
		}
		want, bm := order("bm25(chunks_fts)")
		got, ours := order("jarvis_rank(chunks_fts)")
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: jarvis_rank order %v, bm25 order %v", q, got, want)
		}
		if !strings.Contains(q, " ") { // one phrase: only the constant idf factor differs
			for i := range bm {
				if r := bm[i] / ours[i]; math.Abs(r-bm[0]/ours[0]) > 1e-9 {
					t.Fatalf("%s: score ratio %v at %d, %v at 0", q, r, i, bm[0]/ours[0])
				}
			}
		} else {
			for i := range bm {
				if math.Abs(bm[i]-ours[i]) > 1e-9*math.Abs(bm[i]) {
					t.Fatalf("%s: score %v, bm25 %v", q, ours[i], bm[i])
				}
			}
		}
	}
}

func TestLengthCode(t *testing.T) {
	for _, c := range []struct{ tokens, code int }{{0, 0}, {1, 1}, {127, 127}, {128, 128}, {143, 128}, {144, 129}, {2160, 255}, {100000, 255}} {
		if got := lengthCode(c.tokens); got != int64(c.code) {
			t.Errorf("lengthCode(%d) = %d, want %d", c.tokens, got, c.code)
		}
	}
	if n := tokenCount("Hello, wörld! x86_64 東京 C++ e-mail 2026-01-02"); n != 11 {
		t.Errorf("tokenCount = %d", n)
	}
}

// chunkTermsMatchIndex fails unless chunk_terms holds, for every token of
// the full-text index, its count of chunks as FTS5 itself counts them
// (fts5vocab), and 0 for tokens no chunk holds any more.
func chunkTermsMatchIndex(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.rdb.Query(`SELECT t.term, t.docs, coalesce(v.doc, 0) FROM chunk_terms t LEFT JOIN chunks_vocab v ON v.term = t.term
		UNION ALL SELECT v.term, NULL, v.doc FROM chunks_vocab v WHERE v.term NOT IN (SELECT term FROM chunk_terms)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var term string
		var docs *int64
		var want int64
		if err := rows.Scan(&term, &docs, &want); err != nil {
			t.Fatal(err)
		}
		if docs == nil || *docs != want {
			t.Fatalf("chunk_terms says %q is in %v chunks, the index %d", term, docs, want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no terms compared")
	}
}

// With each whole word's count of chunks taken from chunk_terms (the third
// argument per phrase), jarvis_rank still gives FTS5's bm25() scores: after
// a bulk build, after notes are edited, added and removed (the triggers),
// and for words no note holds.
func TestJarvisRankCountsAreTheIndexs(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 8))
	words := strings.Fields("tea dentist garden invoice Zürich café naïve 2026 x86_64 東京 données über-cool e-mail C++ rust go running runs ran")
	note := func() string {
		var b strings.Builder
		for j, n := 0, 1+rng.IntN(80); j < n; j++ {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString([]string{" ", ", ", ". ", " - ", "\n", " **", "** ", "/", "(", ") ", "\n\n"}[rng.IntN(11)])
		}
		return b.String() + "\n"
	}
	for i := 0; i < 40; i++ {
		writeFile(t, root, fmt.Sprintf("memory/2026-01-%02d.md", 1+i%28), note())
	}
	s := openStore(t, root, nil)
	ctx := context.Background()
	queries := []string{`"tea" AND "garden"`, `"cafe" OR "invoice" OR "zurich"`, `"running" AND "go"`, `"e" AND "mail"`,
		`"東京" OR "donnees"`, `"tea" AND ("absent" OR "dentist")`, `"rust"* AND "go"`}
	check := func(stage string) {
		t.Helper()
		chunkTermsMatchIndex(t, s)
		for _, q := range queries {
			score := func(fn string, args []any) map[int64]float64 {
				rows, err := s.rdb.QueryContext(ctx, `SELECT rowid, `+fn+` FROM chunks_fts WHERE chunks_fts MATCH ?`, append(args, q)...)
				if err != nil {
					t.Fatalf("%s: %s %s: %v", stage, fn, q, err)
				}
				defer rows.Close()
				m := map[int64]float64{}
				for rows.Next() {
					var id int64
					var sc float64
					if err := rows.Scan(&id, &sc); err != nil {
						t.Fatal(err)
					}
					m[id] = sc
				}
				return m
			}
			n := strings.Count(q, `"`) / 2
			args := []any{0.0}
			for i := 0; i < n; i++ {
				args = append(args, 1.0, -1, 1)
			}
			want := score("bm25(chunks_fts)", nil)
			got := score("jarvis_rank(chunks_fts"+strings.Repeat(", ?", len(args))+")", args)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s: %s: %d rows ranked, bm25 %d", stage, q, len(got), len(want))
			}
			for id, w := range want {
				if math.Abs(got[id]-w) > 1e-9*math.Abs(w) {
					t.Fatalf("%s: %s: row %d scores %v, bm25 %v", stage, q, id, got[id], w)
				}
			}
		}
	}
	check("bulk build")
	for i := 0; i < 10; i++ {
		rel := fmt.Sprintf("memory/2026-01-%02d.md", 1+i)
		writeFile(t, root, rel, note())
		if err := s.syncLocked(ctx, rel); err != nil {
			t.Fatal(err)
		}
	}
	rel := "memory/2026-03-01.md"
	writeFile(t, root, rel, "tea garden dentist\n")
	if err := s.syncLocked(ctx, rel); err != nil {
		t.Fatal(err)
	}
	check("edits and a new note")
	for i := 11; i < 20; i++ {
		rel := fmt.Sprintf("memory/2026-01-%02d.md", i)
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
		if err := s.syncLocked(ctx, rel); err != nil {
			t.Fatal(err)
		}
	}
	check("notes removed")
	// The counts are read from chunk_terms, not counted again: a wrong
	// count there changes the score.
	q := `"tea" AND "garden"`
	var before, after float64
	rank := `SELECT jarvis_rank(chunks_fts, 0.0, 1.0, -1, 1, 1.0, -1, 1) AS sc FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid LIMIT 1`
	if err := s.rdb.QueryRow(rank, q).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.Exec(`UPDATE chunk_terms SET docs = docs + 5 WHERE term = 'tea'`); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.QueryRow(rank, q).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Fatalf("the score (%v) did not change with the count in chunk_terms", before)
	}
}
