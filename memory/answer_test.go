//go:build sqlite_fts5

package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Words are matched by stem: "works" finds "work", "moving" finds "moved".
func TestSearchStems(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "Ana works at the bakery.\n\nWe moved the piano.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	for q, want := range map[string]string{"work": "bakery", "moving piano": "piano"} {
		res := search(t, s, q, "")
		if len(res) != 1 || !strings.Contains(res[0].Excerpt, want) {
			t.Fatalf("%q: %+v", q, res)
		}
	}
}

// A synonym from WordNet finds a note that shares no word with the query,
// and ranks below a note with the user's own word.
func TestSearchSynonyms(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "Saw the physician about my knee.\n\nMy doctor is on holiday.\n")
	s := openStore(t, root, nil)
	if ok, err := s.WordNet(); !ok {
		t.Fatalf("WordNet not available (%v): scripts/setup.sh installs wordnet-base", err)
	}
	res := search(t, s, "doctor", "")
	if len(res) != 2 || !strings.Contains(res[0].Excerpt, "doctor") || !strings.Contains(res[1].Excerpt, "physician") {
		t.Fatalf("got %+v, want the doctor note, then the physician note", res)
	}
	off := openStore(t, t.TempDir(), func(o *Options) { o.WordNetDir = "-" })
	writeFile(t, off.root, "memory/notes.md", "Saw the physician about my knee.\n")
	if err := off.syncLocked(context.Background(), "memory/notes.md"); err != nil {
		t.Fatal(err)
	}
	if res := search(t, off, "doctor", ""); len(res) != 0 {
		t.Fatalf("without WordNet: %+v", res)
	}
	if ok, err := off.WordNet(); ok || err != nil {
		t.Fatalf("WordNet() = %v, %v with synonyms off", ok, err)
	}
}

// Stop words never match on their own: a question whose content word is in
// no note finds nothing instead of chatty notes full of "is" and "my".
func TestStopWordsDoNotMatchAlone(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "It is what it is, my friend.\n\nThe dentist is Dr. Okafor.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	if res := search(t, s, "what is my zebra?", ""); len(res) != 0 {
		t.Fatalf("got %+v, want nothing", res)
	}
	res := search(t, s, "who is my dentist now?", "")
	if len(res) != 1 || !strings.Contains(res[0].Excerpt, "Okafor") {
		t.Fatalf("got %+v", res)
	}
	for _, w := range []string{"a", "now", "my", "yourselves", "between", "both", "s"} {
		if !IsStopWord(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
	for _, w := range []string{"dentist", "nowhere", "mystery"} {
		if IsStopWord(w) {
			t.Errorf("%q is a stop word", w)
		}
	}
}

// The newest statement of a fact wins over older ones and over a later
// mention; a superseded line ranks below its replacement and says so.
func TestNewestStatementWins(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2025-03-01.md", "# 2025-03-01\n\nMy dentist is Dr. Haddad.\n")
	writeFile(t, root, "memory/2025-09-01.md", "# 2025-09-01\n\nMy new dentist is Dr. Lindqvist.\n")
	writeFile(t, root, "memory/2026-02-10.md", "# 2026-02-10\n\nReminder: my dentist check-up is due.\n")
	s := openStore(t, root, nil)
	res := search(t, s, "who is my dentist now?", "")
	if len(res) != 3 || !strings.Contains(res[0].Excerpt, "Lindqvist") || !strings.Contains(res[1].Excerpt, "Haddad") {
		t.Fatalf("got %+v, want Lindqvist, Haddad, the reminder", res)
	}
	ctx := context.Background()
	if err := s.Supersede(ctx, Lines{Path: "memory/2025-09-01.md", LineStart: 1, LineEnd: 3}, "memory/2026-02-11.md"); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, root, "memory/2025-09-01.md")
	if len(lines) != 3 || lines[0] != "# 2025-09-01" || lines[2] != "My new dentist is Dr. Lindqvist. (superseded by memory/2026-02-11.md)" {
		t.Fatalf("file now %q", lines)
	}
	if err := s.Supersede(ctx, Lines{Path: "memory/2025-09-01.md", LineStart: 3, LineEnd: 3}, "memory/x.md"); err != nil {
		t.Fatal(err)
	}
	if again := fileLines(t, root, "memory/2025-09-01.md"); again[2] != lines[2] {
		t.Fatalf("marked twice: %q", again[2])
	}
	res = search(t, s, "who is my dentist now?", "")
	if len(res) != 3 || !strings.Contains(res[0].Excerpt, "Haddad") || res[0].Superseded {
		t.Fatalf("got %+v, want Haddad first", res)
	}
	var old Result
	for _, r := range res {
		if strings.Contains(r.Excerpt, "Lindqvist") {
			old = r
		}
	}
	if !old.Superseded || old.SupersededBy != "memory/2026-02-11.md" || old.LineStart > 3 || old.LineEnd != 3 {
		t.Fatalf("superseded line %+v", old)
	}
	for _, bad := range []Lines{{"memory/2025-09-01.md", 4, 4}, {"memory/2025-09-01.md", 0, 1}, {"memory/none.md", 1, 1}} {
		if err := s.Supersede(ctx, bad, "memory/x.md"); !errors.Is(err, ErrInvalidRange) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Supersede(%v) = %v", bad, err)
		}
	}
}

// The newest statement wins even when it lacks a word of the question
// ("work" here), over an older statement that has it, over later lines
// that mention the subject without stating a value, and over someone
// else's newer statement.
func TestNewestStatementWithOtherWords(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2025-03-01.md", "# 2025-03-01\n\nMy partner works at Siemens.\n\nMy manager is Helga.\n")
	writeFile(t, root, "memory/2025-06-01.md", "# 2025-06-01\n\nMy partner switched jobs to Spotify.\n\nRaj is my manager.\n")
	writeFile(t, root, "memory/2025-09-01.md", "# 2025-09-01\n\nAna's partner works at the university.\n\nOne-on-one with my manager moved to Thursday.\n")
	writeFile(t, root, "memory/2026-01-10.md", "# 2026-01-10\n\nMy partner had a long day at work.\n\nBank holiday next Monday, my partner reminded me.\n")
	for i := range 20 { // other days, so that "partner" is a rare word as in a real year of notes
		writeFile(t, root, fmt.Sprintf("memory/2025-10-%02d.md", i+1), "# Notes\n\nWent for a run, then soup for dinner.\n\nFixed the bike.\n")
	}
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	for q, want := range map[string]string{
		"Where does my partner work now?": "Spotify",
		"Who is my manager now?":          "Raj",
	} {
		res := search(t, s, q, "")
		if len(res) == 0 || !strings.Contains(res[0].Excerpt, want) {
			t.Errorf("%q: got %+v, want %s first", q, res, want)
		}
	}
}

// WriteReplacing checks its references before writing; CRLF files keep
// their line endings when marked.
func TestWriteReplacing(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/MEMORY.md", "# Memory\r\n\r\nLives in Berlin.\r\n")
	s := openStore(t, root, nil)
	ctx := context.Background()
	if _, err := s.WriteReplacing(ctx, TargetDaily, "Moved to Lisbon.", []Lines{{"memory/MEMORY.md", 9, 9}}); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("err = %v, want ErrInvalidRange", err)
	}
	if _, err := os.Stat(filepath.Join(root, "memory", "2026-02-11.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused write created the daily note: %v", err)
	}
	l, err := ParseLines("memory/MEMORY.md:3")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := s.WriteReplacing(ctx, TargetDaily, "Moved to Lisbon.", []Lines{l})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "memory", "MEMORY.md"))
	if want := "# Memory\r\n\r\nLives in Berlin. (superseded by " + rel + ")\r\n"; string(b) != want {
		t.Fatalf("MEMORY.md %q, want %q", b, want)
	}
	for _, bad := range []string{"memory/MEMORY.md", "memory/MEMORY.md:x", "memory/MEMORY.md:3-2", "../x.md:1"} {
		if _, err := ParseLines(bad); err == nil {
			t.Errorf("ParseLines(%q) accepted", bad)
		}
	}
	if l, err := ParseLines(" memory/a.md:2-5 "); err != nil || l != (Lines{"memory/a.md", 2, 5}) || l.String() != "memory/a.md:2-5" {
		t.Errorf("ParseLines: %+v %v", l, err)
	}
}

// An index from before stemming (schema 2) is rebuilt from the notes, which
// stay as they are.
func TestOldIndexIsRebuiltWithStemming(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "Ana works at the bakery.\n")
	s := openStore(t, root, nil)
	s.Close()
	db, err := sql.Open("sqlite3", filepath.Join(root, "memory-index.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 2`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = openStore(t, root, nil)
	if res := search(t, s, "work", ""); len(res) != 1 {
		t.Fatalf("after rebuild: %+v", res)
	}
	var v int
	if err := s.rdb.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d (%v), want %d", v, err, schemaVersion)
	}
	if lines := fileLines(t, root, "memory/notes.md"); len(lines) != 1 || lines[0] != "Ana works at the bakery." {
		t.Fatalf("notes changed: %q", lines)
	}
}

// What counts as a statement of a fact, a mention, or neither, for the
// question "where does my partner work now?".
func TestClassify(t *testing.T) {
	s := openStore(t, t.TempDir(), func(o *Options) { o.WordNetDir = "-" })
	q := "where does my partner work now?"
	p := s.makePlan(q, parseQuery(q))
	for line, want := range map[string]lineClass{
		"My partner works at Spotify.":                                      lineStatement, // a name
		"My partner works at a bakery.":                                     lineStatement, // topic, linking word, article, noun
		"Partner's new office: 4th floor.":                                  lineStatement, // a number
		"My partner had a long day at work.":                                lineOther,
		"Reminder: pick up my partner from work on Friday.":                 lineMention,
		"Does my partner work on Saturdays?":                                lineMention,
		"TODO ask my partner about work":                                    lineMention,
		"My partner works at Spotify. (superseded by memory/2026-03-01.md)": lineSuperseded,
		"Ana's partner complained about work.":                              lineOther,     // an owner is not a value
		"Siemens is my partner's employer.":                                 lineStatement, // a name before "is"
		"Worked late, my partner too.":                                      lineOther,
		"Lunch with my partner, then work at Siemens.":                      lineMention, // "with my partner": about something else
		"Bank holiday next Monday, my partner reminded me about work.":      lineOther,   // the name is in another clause
	} {
		if got := classifyLine(line, p); got != want {
			t.Errorf("%q: class %d, want %d", line, got, want)
		}
	}
	if !isQuestion("dentist?", nil) || isQuestion("dentist", parseQuery("dentist")) || !isQuestion("where do I live", parseQuery("where do I live")) {
		t.Error("isQuestion")
	}
}

// Whose fact a question asks about, and what.
func TestSubjectOf(t *testing.T) {
	for q, want := range map[string][2]string{
		"Who is my dentist now?":                   {"my", "dentist"},
		"What is Ana's son's school now?":          {"ana", "son"},
		"What is Tom’s daughter’s swimming coach?": {"tom", "daughter"},
		"Where does my new partner work?":          {"my", "partner"},
		"where do I live now?":                     {"", ""},
		"dentist":                                  {"", ""},
		"is it my":                                 {"", ""},
	} {
		if o, s := subjectOf(q); o != want[0] || s != want[1] {
			t.Errorf("subjectOf(%q) = %q, %q; want %q, %q", q, o, s, want[0], want[1])
		}
	}
}

// Newer statements about the same person that answer another question
// ("my sister lives in Porto") stay below the line that answers this one:
// only statements scoring near the best of them count as the same fact.
func TestOtherFactOfSubjectStaysBelow(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2025-03-01.md", "# 2025-03-01\n\nMy sister said the trip to Rome was great.\n")
	writeFile(t, root, "memory/2025-06-01.md", "# 2025-06-01\n\nMy sister's birthday is on May 3.\n")
	writeFile(t, root, "memory/2025-07-01.md", "# 2025-07-01\n\nMy sister lives in Porto.\n")
	for i := range 20 {
		writeFile(t, root, fmt.Sprintf("memory/2025-10-%02d.md", i+1), "# Notes\n\nWent for a run, then soup for dinner; a trip to the market.\n")
	}
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	for q, want := range map[string]string{
		"What did my sister say about the trip?": "Rome",
		"When is my sister's birthday?":          "May 3",
		"Where does my sister live now?":         "Porto",
	} {
		if res := search(t, s, q, ""); len(res) == 0 || !strings.Contains(res[0].Excerpt, want) {
			t.Errorf("%q: got %+v, want %s first", q, res, want)
		}
	}
}
