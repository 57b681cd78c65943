//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
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
