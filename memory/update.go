package memory

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Knowledge updates. When a fact changes ("I moved to Lisbon"), the note
// that states the old value stays (it is the user's history and stays
// searchable) but is marked: " (superseded by memory/2026-03-04.md)" is
// appended to each replaced line, in the Markdown file itself, so the mark
// survives an index rebuild and is visible in any editor. Search ranks a
// marked line below others and reports it (Result.Superseded). A user may
// write the mark by hand, with or without "by ...".

// Lines names lines of a memory file: 1-based, inclusive.
type Lines struct {
	Path      string `json:"path"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
}

func (l Lines) String() string {
	if l.LineEnd == l.LineStart {
		return fmt.Sprintf("%s:%d", l.Path, l.LineStart)
	}
	return fmt.Sprintf("%s:%d-%d", l.Path, l.LineStart, l.LineEnd)
}

// ParseLines reads "PATH:LINE" or "PATH:START-END", the form search results
// are shown in to agents (memory/2026-02-10.md:12-14).
func ParseLines(s string) (Lines, error) {
	s = strings.TrimSpace(s)
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Lines{}, fmt.Errorf("%w: %q: want PATH:LINE or PATH:START-END, e.g. memory/2026-02-10.md:12", ErrInvalidRange, s)
	}
	path, span := s[:i], s[i+1:]
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		b = a
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start < 1 || end < start {
		return Lines{}, fmt.Errorf("%w: %q: want PATH:LINE or PATH:START-END with 1 <= START <= END", ErrInvalidRange, s)
	}
	rel, err := cleanRel(path)
	if err != nil {
		return Lines{}, err
	}
	return Lines{Path: rel, LineStart: start, LineEnd: end}, nil
}

var supersededMark = regexp.MustCompile(`(?i)\s*\(superseded(?: by ([^()]*))?\)\s*$`)

// supersededBy reports whether a line carries the superseded mark and what
// replaced it ("" if the mark does not say).
func supersededBy(line string) (string, bool) {
	if !strings.Contains(line, "uperseded") && !strings.Contains(line, "UPERSEDED") {
		return "", false // the regexp is most of a search's Go time otherwise
	}
	m := supersededMark.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

// WriteReplacing is Write for a changed fact: it appends content to the
// target, then marks the lines it replaces as superseded by the file
// written to. The lines are checked before anything is written (they must
// exist in a memory file), so a bad reference changes nothing; a line
// already marked keeps its mark.
func (s *Store) WriteReplacing(ctx context.Context, target, content string, replaces []Lines) (string, error) {
	if s.closed() {
		return "", ErrClosed
	}
	for _, l := range replaces {
		if _, err := s.linesOf(ctx, l); err != nil {
			return "", err
		}
	}
	rel, err := s.Write(ctx, target, content)
	if err != nil {
		return "", err
	}
	for _, l := range replaces {
		if err := s.Supersede(ctx, l, rel); err != nil {
			return rel, fmt.Errorf("memory: saved to %s, but marking %s as superseded failed: %w", rel, l, err)
		}
	}
	return rel, nil
}

// linesOf checks that l names existing lines and returns the file's lines.
func (s *Store) linesOf(ctx context.Context, l Lines) ([]string, error) {
	rg, err := s.Get(ctx, l.Path, 1, 0)
	if err != nil {
		return nil, err
	}
	if l.LineStart < 1 || l.LineEnd < l.LineStart || l.LineEnd > rg.TotalLines {
		return nil, fmt.Errorf("%w: %s (the file has %d lines)", ErrInvalidRange, l, rg.TotalLines)
	}
	return splitLines(rg.Text), nil
}

// Supersede marks lines l (those that are not blank or headings) as replaced by the note
// in file by, and re-indexes the file. The line count and every other byte
// of the file stay as they were.
func (s *Store) Supersede(ctx context.Context, l Lines, by string) error {
	if s.closed() {
		return ErrClosed
	}
	if _, err := s.linesOf(ctx, l); err != nil {
		return err
	}
	mark := " (superseded by " + by + ")"
	return s.modify(ctx, l.Path, false, func(old []byte) ([]byte, error) {
		parts := strings.SplitAfter(string(old), "\n")
		n := 0
		for i, part := range parts {
			if part == "" { // after a final line break
				continue
			}
			n++
			if n < l.LineStart || n > l.LineEnd {
				continue
			}
			body := strings.TrimSuffix(part, "\n")
			eol := part[len(body):]
			if strings.HasSuffix(body, "\r") && eol != "" {
				body, eol = body[:len(body)-1], "\r"+eol
			}
			// A heading names a section and a comment line (the service's
			// entry label) says who wrote what follows, neither is a fact:
			// a search hit's range often starts with one.
			if _, marked := supersededBy(body); marked || isBlank(body) || isHeading(body) || isCommentLine(body) {
				continue
			}
			parts[i] = body + mark + eol
		}
		if n < l.LineEnd {
			// The file shrank since it was checked (edited meanwhile).
			return nil, fmt.Errorf("%w: %s (the file has %d lines)", ErrInvalidRange, l, n)
		}
		return []byte(strings.Join(parts, "")), nil
	})
}

// lineClass is what a line does with the fact a query asks about.
type lineClass uint8

const (
	lineOther      lineClass = iota
	lineStatement            // states a value the query does not contain
	lineMention              // a reminder, to-do or question about the topic
	lineSuperseded           // marked as replaced by a newer note
)

// mentionPrefixes start lines that are about doing something, not facts.
var mentionPrefixes = []string{"reminder", "remind me", "todo", "to do", "to-do", "remember to", "don't forget", "do not forget", "need to"}

// lineFacts classifies a candidate's best line for the query and returns
// the sentence of it that best matches, and whether that sentence names
// the query's subject other than after a preposition (aboutSubject).
func lineFacts(line string, p plan) (c lineClass, sentence string, about bool) {
	sentence = bestSentence(line, p)
	clause, about, prep := aboutSubject(sentence, p)
	c = classify(line, clause, p)
	if prep && c == lineStatement {
		c = lineMention
	}
	return c, sentence, about && !prep
}

// classifyLine is lineFacts' class alone.
func classifyLine(line string, p plan) lineClass {
	c, _, _ := lineFacts(line, p)
	return c
}

// classify tells statements of a fact ("Ana's dentist is Dr. Okafor.") from
// mentions of its topic ("Reminder: dentist check-up is due."). A statement
// carries a value the query does not contain: a name (a capitalised word
// not starting a sentence), or a number. The heuristic is for English
// notes; other lines are lineOther and ranked by their words alone.
func classify(line, sentence string, p plan) lineClass {
	if _, ok := supersededBy(line); ok {
		return lineSuperseded
	}
	if c := classifySentence(line, p); c == lineMention {
		return c // "Reminder: pick up Ana from work on Friday."
	}
	return classifySentence(sentence, p)
}

func classifySentence(line string, p plan) lineClass {
	t := strings.TrimSpace(line)
	t = strings.TrimLeft(t, "#>-*+ \t")
	t = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(t, "[ ] "), "[x] "), "[X] ")
	lower := strings.ToLower(t)
	if strings.Contains(t, "?") {
		return lineMention
	}
	for _, m := range mentionPrefixes {
		if strings.HasPrefix(lower, m) {
			return lineMention
		}
	}
	// inQuery: a lower-cased word is one of the query's (any form).
	inQuery := func(w string) bool {
		if IsStopWord(w) {
			return false
		}
		if in, ok := p.known[w]; ok {
			return in
		}
		in := false
		ws := stemPrefix(w)
	groups:
		for _, g := range p.groups {
			for _, ph := range g {
				if strings.HasPrefix(w, ph.stem) || len(ws) >= 3 && strings.HasPrefix(ph.text, ws) {
					in = true
					break groups
				}
			}
		}
		if p.known != nil {
			p.known[w] = in
		}
		return in
	}
	start := true // at the start of a sentence
	prev := ""
	// A value may also be a common noun after the topic, a linking word and
	// an article: "My partner works at a bakery."
	step := 0 // 1: topic seen, 2: then a linking word, 3: then an article
	fields := strings.Fields(t)
	for i, w := range fields {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		lc := strings.ToLower(core)
		q := core != "" && inQuery(lc)
		switch {
		case core == "":
		case step == 3 && !IsStopWord(lc) && !q:
			return lineStatement
		case q:
			step = 1
		case step == 1 && linkingWords[lc]:
			step = 2
		case step == 2 && (lc == "a" || lc == "an" || lc == "the"):
			step = 3
		default:
			if step > 1 {
				step = 0
			}
		}
		if core != "" {
			r, _ := utf8.DecodeRuneInString(core)
			hasDigit := strings.ContainsFunc(core, unicode.IsDigit)
			// "Ana's" names whose fact it is, not its value.
			possessive := strings.HasSuffix(core, "'s") || strings.HasSuffix(core, "’s")
			// A capital starts every sentence; there it is a name only
			// when "is" follows: "Raj is my manager."
			named := !start || i+1 < len(fields) && linkingVerbs[strings.ToLower(fields[i+1])] && !IsStopWord(lc)
			name := unicode.IsUpper(r) && named && !possessive && core != "I" && !strings.HasPrefix(core, "I'")
			if (hasDigit || name) && !q {
				return lineStatement
			}
			prev = core
		}
		start = endsSentence(w, prev)
	}
	return lineOther
}

// linkingWords join a topic to its value: "is a", "at the".
var linkingWords = map[string]bool{"is": true, "are": true, "was": true, "were": true, "at": true, "to": true, "with": true, "by": true, "from": true}

// linkingVerbs after a sentence's first word make it the value: "Raj is
// my manager."
var linkingVerbs = map[string]bool{"is": true, "are": true, "was": true, "were": true}

// endsSentence: a sentence ends at . ! ? (and a value may start after : ;)
// unless the word is a short
// abbreviation with a capital ("Dr.", "Mrs.").
func endsSentence(w, core string) bool {
	last := w[len(w)-1]
	return strings.ContainsRune(".!?:;", rune(last)) &&
		!(last == '.' && len(core) <= 3 && core != "" && unicode.IsUpper(rune(core[0])))
}

// sentences splits a line where endsSentence says.
func sentences(line string) []string {
	var out []string
	words := strings.Fields(line)
	from := 0
	for i, w := range words {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		if (endsSentence(w, core) && !strings.ContainsAny(w[len(w)-1:], ":;")) || i == len(words)-1 {
			out = append(out, strings.Join(words[from:i+1], " "))
			from = i + 1
		}
	}
	return out
}

// sameOwner reports whether a sentence can be about the same person's fact
// as the query: when the query says whose it is ("my dentist", "Ana's
// dentist"), a sentence that names another owner and not this one is about
// someone else. In a line of a transcript, "my" and "our" are the
// speaker's (speakerOf): "Ana: My kids love ..." is about Ana's kids.
func sameOwner(sentence, speaker string, p plan) bool {
	if len(p.owners) == 0 {
		return true
	}
	theirs := owners(sentence)
	if len(theirs) == 0 {
		return true
	}
	// "What did Jon do for his team?": "his" is Jon's.
	third := slices.ContainsFunc(p.owners, thirdPerson)
	for _, o := range theirs {
		if speaker != "" && firstPerson(o) {
			o = speaker
		}
		if slices.Contains(p.owners, o) || third && slices.Contains(p.names, o) {
			return true
		}
	}
	return false
}

// speakerOf is the speaker of a line of a transcript, lower case: the one
// or two capitalised words before ": " that start it ("Ana: ...", "Ana
// Lopez: ..."). A speaker "Me" or "I" is the user ("my"). Other lines (a
// list item "- Number: ...", a heading, a line with no such start) have
// none: "".
func speakerOf(line string) string {
	name, rest, ok := strings.Cut(line, ": ")
	if !ok || rest == "" {
		return ""
	}
	words := strings.Fields(name)
	if len(words) == 0 || len(words) > 2 || strings.Join(words, " ") != name {
		return ""
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return ""
		}
	}
	name = strings.ToLower(name)
	if name == "me" || name == "i" {
		return "my"
	}
	return name
}

// owners lists the possessives of a text, lower case: possessive
// determiners ("my") and names with 's ("ana" for "Ana's").
func owners(text string) []string {
	var out []string
	for _, w := range possessiveWords(text) {
		if o, ok := possessor(w); ok {
			out = append(out, o)
		}
	}
	return out
}

// possessiveWords cuts text into lower-case words keeping apostrophes
// (straight or curly, made straight): "Ana's", "my".
func possessiveWords(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' && r != '’' })
	for i, w := range words {
		words[i] = strings.ReplaceAll(w, "’", "'")
	}
	return words
}

// possessor: whose a possessive word says ("my" -> "my", "ana's" ->
// "ana"); ok is false for other words, among them contractions of a stop
// word ("what's", "it's", "there's": "is", not whose). In the user's notes
// "the user's" is the user's own: "my".
func possessor(w string) (string, bool) {
	switch {
	case isPossessive(w):
		return w, true
	case w == "user's":
		return "my", true
	case strings.HasSuffix(w, "'s") && len(w) > 2 && !IsStopWord(strings.TrimSuffix(w, "'s")) && w != "let's":
		return strings.TrimSuffix(w, "'s"), true
	}
	return "", false
}

// firstPerson: the owner is the user ("my", "our"): the notes are theirs,
// so a note naming the subject without saying whose ("- Number: 0151 2233",
// "Renewed the car insurance with Aviva.") is about the user's.
func firstPerson(owner string) bool { return owner == "my" || owner == "our" }

// thirdPerson: the owner is someone the text names elsewhere ("his",
// "her", "their").
func thirdPerson(owner string) bool { return owner == "his" || owner == "her" || owner == "their" }

// isQuestion: the query asks for a fact ("who is my dentist?", "where do I
// live now") rather than naming a topic ("dentist"). Only questions get
// the fact-answering ranking (rerank).
func isQuestion(q string, terms []term) bool {
	if strings.Contains(q, "?") {
		return true
	}
	if len(terms) == 0 {
		return false
	}
	switch terms[0].text {
	case "who", "whom", "whose", "what", "which", "where", "when", "why", "how",
		"is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had", "will", "would", "should":
		return true
	}
	return false
}

// isCommentLine reports whether l is one whole HTML comment, which Markdown
// does not show.
func isCommentLine(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->")
}

// subjectOf finds whose fact a query asks about and what: the first
// possessive ("my", "Ana's") and the content word after it ("dentist" in
// "who is my dentist now?", "son" in "Ana's son's school"), lower case;
// "" when the query has none.
func subjectOf(q string) (owner, subject string) {
	words := possessiveWords(q)
	for i, w := range words {
		owner, ok := possessor(w)
		if !ok {
			continue
		}
		for _, n := range words[i+1:] {
			n = strings.TrimSuffix(strings.TrimSuffix(n, "'s"), "'")
			if n != "" && !IsStopWord(n) && !timeQualifiers[n] {
				return owner, n
			}
		}
		return "", ""
	}
	return "", ""
}

// timeQualifiers before the subject say which of its values is meant
// ("my new doctor", "my current address"), which the ranking of statements
// by date answers; the subject is the word after them.
var timeQualifiers = map[string]bool{"new": true, "old": true, "current": true, "present": true, "former": true, "previous": true, "latest": true}

// prepositions before "my dentist" make a line about something else: "with
// my manager", "at Ana's school".
var prepositions = map[string]bool{"with": true, "at": true, "for": true, "to": true, "from": true, "about": true, "of": true, "on": true, "after": true, "by": true}

// aboutSubject finds the query's owner and subject in a sentence ("my"
// then "dentist" within three words) and returns the sentence from the
// start of that clause (a value said before a comma is about something
// else: "Bank holiday next Monday, my brother reminded me."); ok is false
// when the sentence does not name them, prep is true when a preposition
// comes before them ("One-on-one with my manager ...").
func aboutSubject(sentence string, p plan) (clause string, ok, prep bool) {
	if p.subject == "" {
		return sentence, false, false
	}
	words := strings.Fields(sentence)
	norm := func(w string) string {
		w = strings.ToLower(strings.ReplaceAll(w, "’", "'"))
		return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' })
	}
	for i, w := range words {
		n := norm(w)
		if n != p.owner && n != p.owner+"'s" {
			continue
		}
		for _, x := range words[i+1 : min(len(words), i+4)] {
			if !strings.HasPrefix(strings.TrimSuffix(norm(x), "'s"), p.subject) {
				continue
			}
			from := 0
			for j := i - 1; j >= 0; j-- {
				if strings.ContainsAny(words[j][len(words[j])-1:], ",;") {
					from = j + 1
					break
				}
			}
			return strings.Join(words[from:], " "), true, i > 0 && prepositions[norm(words[i-1])]
		}
	}
	if firstPerson(p.owner) {
		// The subject named without an owner, or with the user's.
		for i, w := range words {
			if !strings.HasPrefix(strings.TrimSuffix(norm(w), "'s"), p.subject) {
				continue
			}
			prev := ""
			if i > 0 {
				prev = norm(words[i-1])
			}
			if o, ok := possessor(prev); ok && !firstPerson(o) {
				continue // "Ana's number"
			}
			from := 0
			for j := i - 1; j >= 0; j-- {
				if strings.ContainsAny(words[j][len(words[j])-1:], ",;") {
					from = j + 1
					break
				}
			}
			return strings.Join(words[from:], " "), true, prepositions[prev]
		}
	}
	return sentence, false, false
}

// changeWords say that a fact changed: "moved to", "switched to", "my new
// doctor", "sold the car and bought ...". Compared by prefix, lower case.
var changeWords = []string{"moved", "moving", "switch", "chang", "new", "now", "sold", "bought", "upgrad", "start", "became", "becom", "join", "left", "transferr", "replac", "instead", "no longer"}

// saysChange reports whether a sentence says that something changed.
func saysChange(sentence string) bool {
	for _, w := range possessiveWords(sentence) {
		for _, c := range changeWords {
			if strings.HasPrefix(w, c) {
				return true
			}
		}
	}
	return strings.Contains(strings.ToLower(sentence), "no longer")
}

// predicateWords are what a statement says about its subject, as stem
// prefixes: its lower-case words other than stop words, the query's owner
// and subject, and values (capitalised words and numbers): "goes" in
// "Ana's son goes to Hill Park School.".
func predicateWords(sentence string, p plan) []string {
	var out []string
	for _, w := range strings.Fields(sentence) {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		if core == "" || strings.ContainsFunc(core, unicode.IsDigit) || strings.ContainsFunc(core, unicode.IsUpper) {
			continue
		}
		lc, _ := possessor(core)
		if lc == "" {
			lc = core
		}
		if IsStopWord(lc) || lc == p.owner || strings.HasPrefix(lc, p.subject) {
			continue
		}
		out = append(out, stemPrefix(lc))
	}
	return out
}

// sharesWord reports whether two lists of stem prefixes have one in common.
func sharesWord(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// timeQualifierPhrase matches the phrases of a question that ask for the
// present value ("these days", "at the moment", "currently"): the ranking
// of statements by date answers them, and their words ("days", "moment")
// would otherwise match notes about something else.
var timeQualifierPhrase = regexp.MustCompile(`(?i)\b(these days|at the moment|at present|right now|as of now|for now|currently|nowadays|lately|presently|any ?more)\b`)

// dropTimeQualifiers removes timeQualifierPhrase from a query, unless that
// leaves no word.
func dropTimeQualifiers(q string) string {
	out := timeQualifierPhrase.ReplaceAllString(q, " ")
	if len(parseQuery(out)) == 0 {
		return q
	}
	return out
}

// namesOf lists the names of a query, lower case: its capitalised words
// other than the first (which any sentence capitalises) and "I".
func namesOf(q string) []string {
	var out []string
	for i, w := range strings.Fields(q) {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		core = strings.TrimSuffix(strings.TrimSuffix(core, "'s"), "’s")
		r, _ := utf8.DecodeRuneInString(core)
		if i == 0 || core == "" || core == "I" || strings.HasPrefix(core, "I'") || !unicode.IsUpper(r) {
			continue
		}
		out = append(out, strings.ToLower(core))
	}
	return out
}
