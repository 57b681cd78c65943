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
	// Superseded is set when the line the hit is about is marked as
	// replaced by a newer note (Supersede), SupersededBy names that note.
	Superseded   bool   `json:"superseded,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
}

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 50

	maxQueryTerms = 16
	maxTermBytes  = 64
	// A hit shows its passage: the best line and its neighbours in the
	// same paragraph, across passage boundaries (around), up to 2,500
	// bytes. A note of a conversation is many short turns, and a
	// question's answer is often in the turn next to the one its words
	// match (bench/locomo, all-evidence R@5: 0.51 with 8 lines of 600
	// bytes, 0.66 within one passage of up to 2,000, 0.76 with these).
	excerptMaxLines = maxChunkLines
	excerptMaxBytes = 2500
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

// phrase is one quoted string of an FTS5 query with how much it counts:
// the user's own words weigh 1, their synonyms less, stop words little.
// Phrases of one group are forms of one query word; the rank rewards
// covering more groups.
type phrase struct {
	term
	weight float64
	group  int    // -1: counts for nothing but its weight
	stem   string // stemPrefix(text), for finding it on a line
}

// Weights of the query plan, tuned on bench/memeval.
const (
	stopWeight       = 0.15 // a stop word the user wrote ("is", "now")
	possessiveWeight = 0.5  // "my", "our": whose dentist is asked about matters
	coverWeight      = 1.0  // score x (1 + coverWeight * groups matched / groups)
	candidatePool    = 200  // candidates ranked before de-duplication and the cut
)

// plan is a query made ready for FTS5: its MATCH expressions and, in the
// same order as the phrases appear in them, each phrase's weight and group
// for jarvis_rank.
type plan struct {
	terms    []term     // the user's words, for excerpts
	groups   [][]phrase // per content word: the word and its synonyms
	stops    []phrase
	owners   []string // whose fact the query asks about (sameOwner)
	question bool     // asks for a fact (isQuestion)
	owner    string   // "my", "ana": whose fact ("" if the query does not say)
	names    []string // the query's names (namesOf), lower case
	subject  string   // the word after the owner ("dentist" in "my dentist"), stemmed
	and, or  string
	andArgs  []any
	orArgs   []any
	// about: rows with the subject and any other query word ("" without a
	// subject), for questions (see Search).
	about     string
	aboutArgs []any
	// known remembers which words of the candidates are query words
	// (classifySentence): the same words recur across hundreds of lines.
	known map[string]bool
}

// makePlan builds the queries Search runs. "all": every content word
// (or one of its synonyms) must match, and the stop words the user wrote
// count a little where they occur; "any" (the fallback when "all" finds
// nothing): any content word or synonym, stop words left out, so that a
// question in plain words is not answered by chatty notes full of "is" and
// "my"; "about" (for a query naming someone's something, subjectOf): that
// word with any other. A query of stop words only is taken as it is.
func (s *Store) makePlan(q string, terms []term) plan {
	p := plan{terms: terms, owners: owners(q), names: namesOf(q), question: isQuestion(q, terms), known: map[string]bool{}}
	owner, subject := subjectOf(q)
	for _, t := range terms {
		if IsStopWord(t.text) && !t.prefix {
			w := stopWeight
			if isPossessive(t.text) {
				w = possessiveWeight
			}
			p.stops = append(p.stops, phrase{term: t, weight: w, group: -1})
			continue
		}
		g := []phrase{{term: t, weight: 1, group: len(p.groups)}}
		if !t.prefix {
			for _, e := range s.expand(t.text) {
				g = append(g, phrase{term: term{text: e.Text}, weight: e.Weight, group: len(p.groups)})
			}
		}
		p.groups = append(p.groups, g)
	}
	if len(p.groups) == 0 {
		for _, st := range p.stops {
			p.groups = append(p.groups, []phrase{{term: st.term, weight: 1, group: len(p.groups)}})
		}
		p.stops = nil
	}
	for _, g := range p.groups {
		for i := range g {
			g[i].stem = stemPrefix(g[i].text)
		}
	}
	var all, any []phrase
	var andParts, orParts []string
	for _, g := range p.groups {
		andParts = append(andParts, "("+joinPhrases(g)+")")
		all = append(all, g...)
		orParts = append(orParts, joinPhrases(g))
		any = append(any, g...)
	}
	if len(p.stops) > 0 {
		// Optional words: (first group OR stop words) is true of every row
		// the groups match; its copy of the first group weighs nothing.
		first := make([]phrase, len(p.groups[0]))
		for i, ph := range p.groups[0] {
			first[i] = phrase{term: ph.term, weight: 0, group: -1}
		}
		opt := append(first, p.stops...)
		andParts = append(andParts, "("+joinPhrases(opt)+")")
		all = append(all, opt...)
	}
	p.and, p.andArgs = strings.Join(andParts, " AND "), rankArgs(all, len(p.groups))
	p.or, p.orArgs = strings.Join(orParts, " OR "), rankArgs(any, len(p.groups))
	for _, g := range p.groups {
		if subject != "" && g[0].text == subject {
			p.owner, p.subject = owner, g[0].stem
			if len(p.groups) == 1 {
				break // the "all" rows are those
			}
			// (subject) AND (any word, stop words included): the subject's
			// copy weighs nothing, so rows rank as in the "all" query.
			first := make([]phrase, len(g))
			for i, ph := range g {
				first[i] = phrase{term: ph.term, weight: 0, group: -1}
			}
			rest := append(append([]phrase{}, any...), p.stops...)
			p.about = "(" + joinPhrases(first) + ") AND (" + joinPhrases(rest) + ")"
			p.aboutArgs = rankArgs(append(first, rest...), len(p.groups))
			break
		}
	}
	return p
}

func joinPhrases(ps []phrase) string {
	ts := make([]term, len(ps))
	for i, ph := range ps {
		ts[i] = ph.term
	}
	return matchExpr(ts, "OR")
}

// rankArgs are jarvis_rank's arguments after the table: the coverage
// weight, then a weight, a group and wholeWord per phrase.
func rankArgs(ps []phrase, groups int) []any {
	cover := coverWeight
	if groups < 2 {
		cover = 0
	}
	args := []any{cover}
	for _, ph := range ps {
		args = append(args, ph.weight, ph.group, wholeWord(ph.term))
	}
	return args
}

// wholeWord is 1 when jarvis_rank may take t's count of chunks from
// chunk_terms (index.go) rather than count its matches: t is not a prefix
// (a one-token t then is a token of the index). 0 otherwise.
func wholeWord(t term) int {
	if t.prefix {
		return 0
	}
	return 1
}

// matchExpr builds an FTS5 MATCH expression joining the terms with op
// ("AND" or "OR"). Terms hold no '"' (only letters, digits, marks, and
// spaces in multi-word synonyms), so quoting cannot be escaped from; the
// replace is belt and braces.
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
// Words are matched by their stem (Porter: "works" finds "work") and, where
// a synonym dictionary is at hand (WordNet, see Options.WordNetDir), by
// their synonyms, which count less than the user's own words. Common words
// ("is", "my", "now") count little. Ranking is BM25 (as FTS5's, see
// rank.go) over chunks (headings with their first block, paragraphs, lists,
// code blocks), weighted per word and raised by the share of the query's
// words a chunk contains. Notes where every content word (or a synonym)
// matches come first; if they are fewer than limit, notes matching some of
// them follow (fillUp: so a question in plain words, "who is my
// dentist?", still finds notes, and one whose answer is spread over several
// notes finds more than the one note having all its words); a
// question naming someone's something ("where does my partner work?")
// also finds the lines naming it without the other words ("My partner
// switched jobs to Spotify."). Among
// the best candidates, notes that state a fact are preferred over notes
// that mention the topic, the newer statement wins (recency applies to
// statements, see rerank), and a line marked superseded ranks below its
// replacement. Near-duplicate excerpts (the same text noted on several
// days) are shown once; a passage that continues a result of the same
// note joins it (joinAdjacent). Any q is valid; one with no words returns no
// results.
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
	q = dropTimeQualifiers(q)
	terms := parseQuery(q)
	results := []Result{}
	if len(terms) == 0 {
		return results, nil
	}
	p := s.makePlan(q, terms)
	fetch := max(4*limit, candidatePool)
	hits, err := s.query(ctx, p.and, p.andArgs, kind, fetch)
	if err != nil {
		return nil, err
	}
	// Notes holding every word filled the pool: places left empty are
	// near-duplicates dropped, not a question spread over several notes.
	saturated := len(hits) >= fetch
	anyRun := false // hits are those of the "any" query
	switch {
	case len(hits) == 0 && len(p.groups) > 1:
		anyRun = true
		if hits, err = s.query(ctx, p.or, p.orArgs, kind, fetch); err != nil {
			return nil, err
		}
	case p.question && p.about != "":
		// The newest statement of a fact often lacks a word of the
		// question ("where does my partner work?": "My partner switched
		// jobs to Spotify."): a question about someone's something also
		// takes the lines naming that something with any other of its
		// words, a superset of the "all" rows.
		if hits, err = s.query(ctx, p.about, p.aboutArgs, kind, fetch); err != nil {
			return nil, err
		}
	}
	if vhits := s.vectorHits(ctx, q); len(vhits) > 0 {
		if hits, err = s.fuse(ctx, hits, vhits, kind); err != nil {
			return nil, err
		}
	}
	s.rerank(hits, p)

	var kept [][]uint64
	if results, err = s.pick(ctx, results, hits, p, limit, &kept); err != nil {
		return nil, err
	}
	if len(results) < limit && !anyRun && !saturated && len(p.groups) > 1 {
		// Too few notes have every word: fill up with notes having some.
		more, err := s.fillUp(ctx, hits, p, kind, 4*limit)
		if err != nil {
			return nil, err
		}
		if results, err = s.pick(ctx, results, more, p, limit, &kept); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// pick appends the excerpts of hits to results, best first, until there
// are limit of them, skipping near-duplicates of those kept.
func (s *Store) pick(ctx context.Context, results []Result, hits []hit, p plan, limit int, kept *[][]uint64) ([]Result, error) {
	var near map[int64][2][]string
	for i, h := range hits {
		if len(results) == limit {
			break
		}
		if _, ok := near[h.id]; !ok {
			// The next few candidates' neighbours in one query: most
			// searches need no more (a near-duplicate takes no place).
			var err error
			if near, err = s.around(ctx, hits[i:min(len(hits), i+limit-len(results)+2)]); err != nil {
				return nil, err
			}
		}
		r := excerpt(h, p, near[h.id][0], near[h.id][1])
		words := wordSet(r.Excerpt)
		dup := false
		for _, k := range *kept {
			if jaccard(words, k) >= dupThreshold {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		*kept = append(*kept, words)
		if joinAdjacent(results, r) {
			continue
		}
		results = append(results, r)
	}
	return results, nil
}

// around returns, per hit, the lines of its paragraph just before and
// just after its passage: a long paragraph (a conversation of many turns)
// is indexed as several passages, and a result's window may run on into
// the next.
func (s *Store) around(ctx context.Context, hits []hit) (map[int64][2][]string, error) {
	// A file's passages are stored in order, one id (a multiple of 256,
	// see storeParsedTx) after the other: the neighbours of a passage are
	// in the id range around it. Each is checked for file and lines.
	var ranges []string
	var args []any
	for _, h := range hits {
		prev, next := (h.id>>8-1)<<8, (h.id>>8+1)<<8
		ranges = append(ranges, "(id BETWEEN ? AND ? AND line_end = ?)", "(id BETWEEN ? AND ? AND line_start = ?)")
		args = append(args, prev, prev+255, h.lineStart-1, next, next+255, h.lineEnd+1)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT file_id, line_start, line_end, text FROM chunks
		WHERE `+strings.Join(ranges, " OR "), args...)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	defer rows.Close()
	near := make(map[int64][2][]string, len(hits))
	for _, h := range hits {
		near[h.id] = [2][]string{}
	}
	for rows.Next() {
		var file int64
		var start, end int
		var text string
		if err := rows.Scan(&file, &start, &end, &text); err != nil {
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		for _, h := range hits {
			if h.file != file || (start != h.lineEnd+1 && end != h.lineStart-1) {
				continue
			}
			lines := strings.Split(text, "\n")
			n := near[h.id]
			if start == h.lineEnd+1 {
				if !isHeading(lines[0]) {
					n[1] = lines[:paragraphEnd(lines)]
				}
			} else if first, _, _ := strings.Cut(h.text, "\n"); !isHeading(first) {
				n[0] = lines[paragraphStart(lines):]
			}
			near[h.id] = n
		}
	}
	return near, rows.Err()
}

// paragraphEnd is the number of lines of ls before the first blank one.
func paragraphEnd(ls []string) int {
	for i, l := range ls {
		if isBlank(l) {
			return i
		}
	}
	return len(ls)
}

// paragraphStart is the index of the first line of ls after the last
// blank one.
func paragraphStart(ls []string) int {
	for i := len(ls) - 1; i >= 0; i-- {
		if isBlank(ls[i]) {
			return i + 1
		}
	}
	return 0
}

// joinAdjacent joins r to a result of the same note whose lines it
// overlaps or continues (the next or previous passage of one
// conversation), within twice a passage's size, so that it takes no place
// of its own. It reports whether it did.
func joinAdjacent(results []Result, r Result) bool {
	for i := range results {
		o := &results[i]
		if o.Path != r.Path || o.Superseded || r.Superseded || r.LineStart > o.LineEnd+1 || r.LineEnd+1 < o.LineStart {
			continue
		}
		lo, hi := min(o.LineStart, r.LineStart), max(o.LineEnd, r.LineEnd)
		lines := make([]string, hi-lo+1)
		exact := true
		for _, x := range []Result{r, *o} {
			ls := strings.Split(x.Excerpt, "\n")
			exact = exact && len(ls) == x.LineEnd-x.LineStart+1 // not a long line cut short
			copy(lines[x.LineStart-lo:], ls)
		}
		text := strings.Join(lines, "\n")
		if !exact || len(text) > 2*excerptMaxBytes {
			continue
		}
		o.Excerpt, o.LineStart, o.LineEnd = text, lo, hi
		return true
	}
	return false
}

type hit struct {
	id, file           int64 // the chunk's and its file's ids
	path, kind         string
	day                int64
	lineStart, lineEnd int
	text               string
	score              float64 // higher is better
	class              lineClass
	owner              bool // not about someone else's (sameOwner)
	about              bool // names the query's owner and subject (aboutSubject)
	changed            bool // and says it changed (saysChange)
	cover              int  // query words (groups) on its best line
}

func (s *Store) query(ctx context.Context, match string, rankArgs []any, kind string, n int) ([]hit, error) {
	// Without a kind filter, pick the top n by BM25 (jarvis_rank, rank.go)
	// from the full-text index alone and join only those; joining every
	// match first costs a row read per match, which dominates for common
	// words.
	rank := "jarvis_rank(chunks_fts" + strings.Repeat(", ?", len(rankArgs)) + ")"
	q := `
		SELECT c.id, c.file_id, f.path, f.kind, f.day, c.line_start, c.line_end, c.text, m.score
		FROM (SELECT rowid, ` + rank + ` AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) AS m
		JOIN chunks c ON c.id = m.rowid
		JOIN files f ON f.id = c.file_id`
	args := append(append([]any{}, rankArgs...), match, n)
	if kind != "" {
		q = `
		SELECT c.id, c.file_id, f.path, f.kind, f.day, c.line_start, c.line_end, c.text, ` + rank + ` AS score
		FROM chunks_fts
		JOIN chunks c ON c.id = chunks_fts.rowid
		JOIN files f ON f.id = c.file_id
		WHERE chunks_fts MATCH ? AND f.kind = ?
		ORDER BY score
		LIMIT ?`
		args = append(append([]any{}, rankArgs...), match, kind, n)
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
		if err := rows.Scan(&h.id, &h.file, &h.path, &h.kind, &h.day, &h.lineStart, &h.lineEnd, &h.text, &bm25); err != nil {
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

// Knowledge-update weights, tuned on bench/memeval.
const (
	mentionFactor     = 0.7 // a reminder, task or question about the topic
	statementBonus    = 0.5 // a line that states a value the query lacks
	supersededFactor  = 0.3 // a line marked superseded by a newer one
	sameFactShare     = 0.3 // statements (of the query's subject) scoring this share of the best are taken as the same fact
	otherOwnerFactor  = 0.4 // "Ana's dentist is ..." when asked about "my dentist"
	otherRecencyShare = 0.2 // of RecencyWeight, for lines that state no value
)

// rerank reorders the candidates, best first. A line marked superseded
// (see Supersede) counts much less. A query naming a topic ("dentist") is
// otherwise ranked by its words and by recency (Options.RecencyWeight,
// halving every RecencyHalfLife) for daily notes. A question ("who is my
// dentist now?", isQuestion) is ranked as a request for a fact:
//   - The line of each chunk that best matches the query is classified
//     (classify): a statement of a value, a mere mention (reminder, to-do,
//     question), or neither. Mentions count less and statements a little
//     more; lines about another person's fact ("Ana's dentist" when the
//     question says "my dentist") less.
//   - Recency raises daily notes that state a value, lines that state none
//     by a fifth as much, and mentions not at all: "dentist check-up is
//     due" in yesterday's note is not news about who the dentist is.
//   - Statements of the same fact are ordered newest first, so the newest
//     value wins over older ones. When the query names someone's something
//     ("my partner", subjectOf), those are the statements naming it
//     (aboutSubject) scoring at least sameFactShare of the best one, and
//     they go above every other line: lines that only mention it, and
//     other facts reached through a synonym. Otherwise they are the
//     statements with as many of the query's words as the best one.
//
// Only the BM25 top candidates (candidatePool) are reordered.
func (s *Store) rerank(hits []hit, p plan) {
	now := s.opts.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	half := s.opts.RecencyHalfLife.Hours() / 24
	recency := func(h *hit, w float64) {
		if w > 0 && h.kind == kindDaily && h.day != 0 {
			age := math.Max(0, today.Sub(time.Unix(h.day, 0)).Hours()/24)
			h.score *= 1 + w*math.Pow(0.5, age/half)
		}
	}
	best, maxCover := 0.0, 0
	for i := range hits {
		h := &hits[i]
		line := bestLine(h.text, p)
		if _, ok := supersededBy(line); ok {
			h.class = lineSuperseded
			h.score *= supersededFactor
		}
		if !p.question {
			// A topic ("dentist"): words and recency alone.
			recency(h, s.opts.RecencyWeight)
			continue
		}
		var sentence string
		h.class, sentence, h.about = lineFacts(line, p)
		h.owner = sameOwner(sentence, speakerOf(line), p)
		if !h.owner {
			h.score *= otherOwnerFactor
		}
		switch h.class {
		case lineMention:
			h.score *= mentionFactor
		case lineStatement:
			h.score *= 1 + statementBonus
			recency(h, s.opts.RecencyWeight)
		case lineOther:
			recency(h, s.opts.RecencyWeight*otherRecencyShare)
		}
		h.cover = groupsOn(sentence, p)
		h.changed = h.about && saysChange(sentence)
		if h.class == lineStatement && h.owner {
			maxCover = max(maxCover, h.cover)
		}
	}
	// Statements of the same fact: those naming the query's subject
	// ("my partner ...") if it has one, else those containing as many of
	// its words as the best statement does.
	sameFact := func(h *hit) bool {
		if h.class != lineStatement || !h.owner {
			return false
		}
		if p.subject != "" {
			return h.about
		}
		return h.cover == maxCover
	}
	bestCover, bestAt := 0, -1
	for i := range hits {
		if h := &hits[i]; sameFact(h) && h.score > best {
			best, bestCover, bestAt = h.score, h.cover, i
		}
	}
	var bestWords []string // the best statement's own words (predicateWords)
	if p.subject != "" && bestAt >= 0 {
		bestWords = predicateWords(bestSentence(bestLine(hits[bestAt].text, p), p), p)
	}
	// A name of the query the best statement has and another lacks makes
	// that other one about something else ("my seat at the Zarnof theatre"
	// is not my seat at the Mirvem theatre).
	var bestNames []string
	if bestAt >= 0 {
		bl := strings.ToLower(bestLine(hits[bestAt].text, p))
		for _, n := range p.names {
			if strings.Contains(bl, n) {
				bestNames = append(bestNames, n)
			}
		}
	}
	// The same fact stated on several days: newest first, just above the
	// best statement's score, keeping their order relative to the rest.
	// Of the subject's statements, those with fewer of the query's words
	// than the best one are another fact ("My sister lives in Porto." for
	// "when is my sister's birthday?") unless they say that something
	// changed ("My partner switched jobs to Spotify.") or say it with a
	// word of the best one ("Ana's son goes to Montessori West." after
	// "Ana's son goes to Hill Park School.").
	var same []*hit
	for i := range hits {
		h := &hits[i]
		if !sameFact(h) || h.score < sameFactShare*best {
			continue
		}
		if len(bestNames) > 0 {
			hl := strings.ToLower(bestLine(h.text, p))
			if slices.ContainsFunc(bestNames, func(n string) bool { return !strings.Contains(hl, n) }) {
				continue
			}
		}
		if p.subject != "" && h.cover < bestCover && !h.changed && !sharesWord(predicateWords(bestSentence(bestLine(h.text, p), p), p), bestWords) {
			continue
		}
		same = append(same, h)
	}
	top := best
	if p.subject != "" {
		// A question about someone's something ("who is my dentist?")
		// is answered by a statement of it: those go above lines that
		// only mention it or match through other words.
		for i := range hits {
			top = max(top, hits[i].score)
		}
	}
	if len(same) > 1 || top > best {
		sort.SliceStable(same, func(i, j int) bool { return dateOf(same[i]) > dateOf(same[j]) })
		for k, h := range same {
			h.score = top * (1 + 1e-3*float64(len(same)-k))
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

// dateOf orders statements in time: a daily note's day; MEMORY.md and
// other notes carry no date and come after dated ones.
func dateOf(h *hit) int64 {
	if h.kind == kindDaily {
		return h.day
	}
	return 0
}

// bestLine is the line of a chunk's text that best matches the query.
func bestLine(text string, p plan) string {
	best, bestScore := "", -1.0
	for l := range strings.SplitSeq(text, "\n") {
		if sc := matchScore(l, p); sc > bestScore {
			best, bestScore = l, sc
		}
	}
	return best
}

// bestSentence is the sentence of a line that best matches the query (a
// line of notes often holds several unrelated sentences). A mark of
// supersession at the line's end counts for every sentence of it.
func bestSentence(line string, p plan) string {
	if _, ok := supersededBy(line); ok {
		return line
	}
	best, bestScore := line, -1.0
	for _, sn := range sentences(line) {
		if sc := matchScore(sn, p); sc > bestScore {
			best, bestScore = sn, sc
		}
	}
	return best
}

// excerpt picks the lines to show: the line of the chunk matching most
// query words, grown with its neighbours (the chunk's, then before and
// after: the paragraph's lines around the chunk) while it fits
// excerptMaxLines and excerptMaxBytes. Blank lines at the edges are
// dropped. Line k of before+chunk+after is file line
// LineStart-len(before)+k.
func excerpt(h hit, p plan, before, after []string) Result {
	chunk := strings.Split(h.text, "\n")
	best, bestScore := 0, -1.0
	for i, l := range chunk {
		if sc := matchScore(l, p); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	lines := slices.Concat(before, chunk, after)
	off := len(before)
	best += off
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
		text = cutAround(text, p.terms)
	}
	r := Result{Path: h.path, Excerpt: text, LineStart: h.lineStart - off + lo, LineEnd: h.lineStart - off + hi}
	if by, ok := supersededBy(lines[best]); ok {
		r.Superseded, r.SupersededBy = true, by
	}
	return r
}

// groupsOn counts the query words (any of each word's forms) on a line.
func groupsOn(line string, p plan) int {
	l := strings.ToLower(line)
	n := 0
	for _, g := range p.groups {
		for _, ph := range g {
			if strings.Contains(l, ph.stem) {
				n++
				break
			}
		}
	}
	return n
}

// matchScore weighs the query words found on a line: per content word its
// best form (the word or a synonym, compared by stem), plus stop words
// (case-insensitive; accents are not folded here, so a hit found through
// FTS5's diacritic folding may fall back to the chunk's first line).
func matchScore(line string, p plan) float64 {
	l := strings.ToLower(line)
	n := 0.0
	for _, g := range p.groups {
		best := 0.0
		for _, ph := range g {
			if ph.weight > best && strings.Contains(l, ph.stem) {
				best = ph.weight
			}
		}
		n += best
	}
	for _, st := range p.stops {
		if strings.Contains(l, st.text) {
			n += st.weight
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
