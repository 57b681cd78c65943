package memory

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Result is one search hit. Excerpt is the text of lines LineStart..LineEnd
// (1-based, inclusive) of Path joined by "\n", except that a single line too
// long to show whole is cut around the match with "…" at the cut ends.
type Result struct {
	Path      string `json:"path"`
	Excerpt   string `json:"excerpt"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
}

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 50

	maxQueryTerms   = 16
	maxTermBytes    = 64
	excerptMaxLines = 8
	excerptMaxBytes = 600
	dupThreshold    = 0.8 // Jaccard similarity above which hits collapse
)

// term is one sanitized query word.
type term struct {
	text   string // lower-cased letters, digits and marks only
	prefix bool   // the user wrote "word*"
}

// parseQuery turns arbitrary user text into search terms. FTS5 query syntax
// (quotes, AND/OR/NOT, NEAR(...), column filters, "-", "^", "*", "+") is
// never passed through: the text is cut into runs of letters, digits and
// combining marks, and each run becomes a quoted FTS5 string, which FTS5
// tokenizes the same way as the notes. The only operator kept is a trailing
// "*" (prefix search) on a word of two or more characters.
func parseQuery(q string) []term {
	var terms []term
	seen := map[term]bool{}
	runes := []rune(strings.ToValidUTF8(q, " "))
	for i := 0; i < len(runes) && len(terms) < maxQueryTerms; {
		if !isWordRune(runes[i]) {
			i++
			continue
		}
		j := i
		hasAlnum := false
		for j < len(runes) && isWordRune(runes[j]) {
			if unicode.IsLetter(runes[j]) || unicode.IsNumber(runes[j]) {
				hasAlnum = true
			}
			j++
		}
		t := term{text: strings.ToLower(string(runes[i:j]))}
		t.prefix = j < len(runes) && runes[j] == '*' && utf8.RuneCountInString(t.text) >= 2
		if len(t.text) > maxTermBytes {
			t.text = truncateRunes(t.text, maxTermBytes)
			t.prefix = true
		}
		i = j
		if hasAlnum && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return terms
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r)
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// matchExpr builds an FTS5 MATCH expression joining the terms with op
// ("AND" or "OR"). Terms hold no '"' (only letters, digits, marks), so
// quoting cannot be escaped from; the replace is belt and braces.
func matchExpr(terms []term, op string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
		if t.prefix {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, " "+op+" ")
}

// Search finds the notes best matching q. kind restricts it to "long_term"
// (MEMORY.md) or "daily" notes; "" searches every file under memory/.
// limit <= 0 means DefaultLimit; it is capped at MaxLimit.
//
// Ranking is BM25 (as FTS5's, see rank.go) over chunks (headings with their first block,
// paragraphs, lists, code blocks), with daily notes boosted by recency
// (Options.RecencyWeight, halving every RecencyHalfLife). All words must
// match; only if that finds nothing are hits matching any word returned
// (so a question in plain words, "who is my dentist?", still finds notes).
// Near-duplicate excerpts (the same text noted on several days) are shown
// once. Any q is valid; one with no words returns no results.
func (s *Store) Search(ctx context.Context, q, kind string, limit int) ([]Result, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	switch kind {
	case "", kindLongTerm, kindDaily:
	default:
		return nil, fmt.Errorf("%w: kind %q (want \"\", %q or %q)", ErrInvalidTarget, kind, kindLongTerm, kindDaily)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	terms := parseQuery(q)
	results := []Result{}
	if len(terms) == 0 {
		return results, nil
	}
	fetch := max(4*limit, 40)
	hits, err := s.query(ctx, matchExpr(terms, "AND"), kind, fetch)
	if err != nil {
		return nil, err
	}
	s.rerank(hits)
	if len(hits) == 0 && len(terms) > 1 {
		more, err := s.query(ctx, matchExpr(terms, "OR"), kind, fetch)
		if err != nil {
			return nil, err
		}
		s.rerank(more)
		hits = more
	}

	var kept [][]uint64
	for _, h := range hits {
		if len(results) == limit {
			break
		}
		r := excerpt(h, terms)
		words := wordSet(r.Excerpt)
		dup := false
		for _, k := range kept {
			if jaccard(words, k) >= dupThreshold {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		kept = append(kept, words)
		results = append(results, r)
	}
	return results, nil
}

type hit struct {
	id                 int64
	path, kind         string
	day                int64
	lineStart, lineEnd int
	text               string
	score              float64 // higher is better
}

func (s *Store) query(ctx context.Context, match, kind string, n int) ([]hit, error) {
	// Without a kind filter, pick the top n by BM25 (jarvis_rank, rank.go)
	// from the full-text index alone and join only those; joining every
	// match first costs a row read per match, which dominates for common
	// words.
	q := `
		SELECT c.id, f.path, f.kind, f.day, c.line_start, c.line_end, c.text, m.score
		FROM (SELECT rowid, jarvis_rank(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) AS m
		JOIN chunks c ON c.id = m.rowid
		JOIN files f ON f.id = c.file_id`
	args := []any{match, n}
	if kind != "" {
		q = `
		SELECT c.id, f.path, f.kind, f.day, c.line_start, c.line_end, c.text, jarvis_rank(chunks_fts) AS score
		FROM chunks_fts
		JOIN chunks c ON c.id = chunks_fts.rowid
		JOIN files f ON f.id = c.file_id
		WHERE chunks_fts MATCH ? AND f.kind = ?
		ORDER BY score
		LIMIT ?`
		args = []any{match, kind, n}
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	defer rows.Close()
	var hits []hit
	for rows.Next() {
		var h hit
		var bm25 float64
		if err := rows.Scan(&h.id, &h.path, &h.kind, &h.day, &h.lineStart, &h.lineEnd, &h.text, &bm25); err != nil {
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		h.score = -bm25 // like FTS5's bm25, jarvis_rank is negative, more negative is better
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	return hits, nil
}

// rerank applies the recency boost to daily notes and sorts best first.
// It only reorders the BM25 top candidates (4x the limit): a stale note
// cannot be pushed out by recency alone unless it ranked outside those.
func (s *Store) rerank(hits []hit) {
	if s.opts.RecencyWeight > 0 {
		now := s.opts.Now()
		today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
		half := s.opts.RecencyHalfLife.Hours() / 24
		for i := range hits {
			if hits[i].kind != kindDaily || hits[i].day == 0 {
				continue
			}
			age := math.Max(0, today.Sub(time.Unix(hits[i].day, 0)).Hours()/24)
			hits[i].score *= 1 + s.opts.RecencyWeight*math.Pow(0.5, age/half)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		if hits[i].path != hits[j].path {
			return hits[i].path < hits[j].path
		}
		return hits[i].lineStart < hits[j].lineStart
	})
}

// excerpt picks the lines of a chunk to show: the line matching most query
// words, grown with its neighbours while it fits excerptMaxLines and
// excerptMaxBytes. Blank lines at the edges are dropped. The line numbers
// follow from the chunk's: line k of its text is file line LineStart+k.
func excerpt(h hit, terms []term) Result {
	lines := strings.Split(h.text, "\n")
	best, bestScore := 0, -1
	for i, l := range lines {
		if sc := matchScore(l, terms); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	lo, hi := best, best
	size := len(lines[best])
	for hi-lo+1 < excerptMaxLines {
		grew := false
		if hi+1 < len(lines) && size+1+len(lines[hi+1]) <= excerptMaxBytes {
			hi++
			size += 1 + len(lines[hi])
			grew = true
		}
		if hi-lo+1 < excerptMaxLines && lo > 0 && size+1+len(lines[lo-1]) <= excerptMaxBytes {
			lo--
			size += 1 + len(lines[lo])
			grew = true
		}
		if !grew {
			break
		}
	}
	for lo < best && isBlank(lines[lo]) {
		lo++
	}
	for hi > best && isBlank(lines[hi]) {
		hi--
	}
	text := strings.Join(lines[lo:hi+1], "\n")
	if lo == hi && len(text) > excerptMaxBytes {
		text = cutAround(text, terms)
	}
	return Result{Path: h.path, Excerpt: text, LineStart: h.lineStart + lo, LineEnd: h.lineStart + hi}
}

// matchScore counts the distinct query words on a line (case-insensitive;
// accents are not folded here, so a hit found through FTS5's diacritic
// folding may fall back to the chunk's first line).
func matchScore(line string, terms []term) int {
	l := strings.ToLower(line)
	n := 0
	for _, t := range terms {
		if strings.Contains(l, t.text) {
			n++
		}
	}
	return n
}

// cutAround shortens one long line to about excerptMaxBytes centred on the
// first query word found, on rune boundaries, marking cuts with "…".
func cutAround(line string, terms []term) string {
	l := strings.ToLower(line)
	at := 0
	for _, t := range terms {
		if i := strings.Index(l, t.text); i >= 0 {
			at = i
			break
		}
	}
	if len(l) != len(line) {
		at = 0 // lower-casing changed byte offsets; do not guess
	}
	start := max(0, at-excerptMaxBytes/3)
	end := min(len(line), start+excerptMaxBytes)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end++
	}
	out := line[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(line) {
		out += "…"
	}
	return out
}

// wordSet returns the distinct words of s (lower-cased), as sorted 64-bit
// FNV-1a hashes: comparing excerpts needs no strings.
func wordSet(s string) []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	var out []uint64
	h, in := uint64(offset), false
	for _, r := range s {
		if r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z') {
			h = (h ^ uint64(unicode.ToLower(r))) * prime
			in = true
			continue
		}
		if r >= utf8.RuneSelf && isWordRune(r) {
			var buf [utf8.UTFMax]byte
			for _, b := range buf[:utf8.EncodeRune(buf[:], unicode.ToLower(r))] {
				h = (h ^ uint64(b)) * prime
			}
			in = true
			continue
		}
		if in {
			out = append(out, h)
		}
		h, in = offset, false
	}
	if in {
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard of two sorted, de-duplicated word lists.
func jaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
