//go:build sqlite_fts5

package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		q    string
		want string // matchExpr(terms, "AND")
	}{
		{"", ""},
		{"   ", ""},
		{"hello", `"hello"`},
		{"Hello World", `"hello" AND "world"`},
		{`"quoted phrase"`, `"quoted" AND "phrase"`},
		{"NEAR(a b)", `"near" AND "a" AND "b"`},
		{"-excluded +plus ^caret", `"excluded" AND "plus" AND "caret"`},
		{"col:value", `"col" AND "value"`},
		{"foo*", `"foo"*`},
		{"f*", `"f"`},
		{"*", ""},
		{"a OR b AND NOT c", `"a" AND "or" AND "b" AND "and" AND "not" AND "c"`},
		{"dup dup DUP", `"dup"`},
		{"café naïve", `"café" AND "naïve"`},
		{"日本語 テスト", `"日本語" AND "テスト"`},
		{"e-mail", `"e" AND "mail"`},
		{"\u0301\u0301", ""},
		{"\xff\xfeok", `"ok"`},
		{strings.Repeat("w", 100), `"` + strings.Repeat("w", maxTermBytes) + `"*`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.q), func(t *testing.T) {
			if got := matchExpr(parseQuery(tc.q), "AND"); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if n := len(parseQuery(strings.Repeat("x y z a b c d e f g h i j k l m n o p q r s ", 3))); n != maxQueryTerms {
		t.Fatalf("terms not capped: %d", n)
	}
}

// searchCorpus is a small workspace exercised by the search tests.
func searchCorpus(t testing.TB) (*Store, string) {
	root := t.TempDir()
	writeFile(t, root, "memory/MEMORY.md", "# Long-term memory\n\nUser's dentist is Dr. Okafor.\n\nPrefers tea over coffee.\n")
	writeFile(t, root, "memory/2026-02-10.md", "# 2026-02-10\n\nCalled the dentist about a crown.\n")
	writeFile(t, root, "memory/2025-01-01.md", "# 2025-01-01\n\nCalled the dentist about a filling.\n")
	writeFile(t, root, "memory/projects/jarvis.md", "# Jarvis\n\nThe \"memory\" feature uses FTS5 NEAR queries.\n")
	return openStore(t, root, nil), root
}

func TestSearch(t *testing.T) {
	s, root := searchCorpus(t)
	tests := []struct {
		q, kind string
		first   string   // best hit ("" for none)
		want    []string // all paths hit, in any order
	}{
		// The recent daily note wins on recency; the 2025 one gets no boost.
		{"dentist", "", "memory/2026-02-10.md", []string{"memory/2026-02-10.md", "memory/MEMORY.md", "memory/2025-01-01.md"}},
		{"dentist", "long_term", "memory/MEMORY.md", []string{"memory/MEMORY.md"}},
		{"dentist", "daily", "memory/2026-02-10.md", []string{"memory/2026-02-10.md", "memory/2025-01-01.md"}},
		// Notes with every word come first, then notes with some...
		{"DENTIST crown", "", "memory/2026-02-10.md", []string{"memory/2026-02-10.md", "memory/MEMORY.md", "memory/2025-01-01.md"}},
		// ...and if none has every word, any word will do.
		{"who is my dentist?", "", "", []string{"memory/2026-02-10.md", "memory/MEMORY.md", "memory/2025-01-01.md"}},
		{"dent*", "long_term", "memory/MEMORY.md", []string{"memory/MEMORY.md"}},
		{`"memory" NEAR(fts5`, "", "memory/projects/jarvis.md", []string{"memory/projects/jarvis.md", "memory/MEMORY.md"}},
		{"okafor", "", "memory/MEMORY.md", []string{"memory/MEMORY.md"}},
		{"nothing-matches-this", "", "", nil},
		{"", "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.q+"/"+tc.kind, func(t *testing.T) {
			res := search(t, s, tc.q, tc.kind)
			var got []string
			for _, r := range res {
				checkResult(t, root, r)
				got = append(got, r.Path)
			}
			if tc.first != "" && (len(got) == 0 || got[0] != tc.first) {
				t.Fatalf("got %v, want %s first", got, tc.first)
			}
			sort.Strings(got)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}

func TestSearchInvalidKind(t *testing.T) {
	s, _ := searchCorpus(t)
	if _, err := s.Search(context.Background(), "x", "weekly", 5); !errors.Is(err, ErrInvalidTarget) {
		t.Fatalf("err = %v, want ErrInvalidTarget", err)
	}
}

func TestSearchRecencyBoost(t *testing.T) {
	root := t.TempDir()
	// Same words, same length: BM25 ties, so only recency can order them.
	writeFile(t, root, "memory/2020-05-01.md", "# old\n\nbudget review meeting alpha\n")
	writeFile(t, root, "memory/2026-02-09.md", "# new\n\nbudget review meeting beta\n")
	for _, tc := range []struct {
		weight float64
		first  string
	}{
		{0.5, "memory/2026-02-09.md"},
		{-1, "memory/2020-05-01.md"}, // boost off: tie broken by path
	} {
		t.Run(fmt.Sprint(tc.weight), func(t *testing.T) {
			s := openStore(t, root, func(o *Options) { o.RecencyWeight = tc.weight })
			res := search(t, s, "budget review", "")
			if len(res) != 2 || res[0].Path != tc.first {
				t.Fatalf("got %+v, want %s first", res, tc.first)
			}
			s.Close()
		})
	}
}

func TestSearchCollapsesNearDuplicates(t *testing.T) {
	root := t.TempDir()
	for d := 1; d <= 4; d++ {
		writeFile(t, root, fmt.Sprintf("memory/2026-01-0%d.md", d),
			"Standup: discussed the quarterly roadmap with the platform team.\n\nOther note number "+fmt.Sprint(d)+" about roadmap.\n")
	}
	s := openStore(t, root, nil)
	res := search(t, s, "quarterly roadmap platform", "")
	if len(res) != 5 || !strings.HasPrefix(res[0].Excerpt, "Standup") {
		t.Fatalf("got %d results, want the 4 copies collapsed to 1, first, then the 4 other notes naming the roadmap: %+v", len(res), res)
	}
	res = search(t, s, "roadmap", "")
	if len(res) != 5 { // 1 collapsed standup + 4 distinct "other note" lines
		t.Fatalf("got %d results, want 5: %+v", len(res), res)
	}
}

func TestSearchLimit(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 30; i++ {
		writeFile(t, root, fmt.Sprintf("memory/n%02d.md", i), fmt.Sprintf("kiwi fact %d is unique text %d\n", i, i*7919))
	}
	s := openStore(t, root, nil)
	for _, tc := range []struct{ limit, want int }{{0, DefaultLimit}, {3, 3}, {1000, 30}} {
		res, err := s.Search(context.Background(), "kiwi", "", tc.limit)
		if err != nil || len(res) != tc.want {
			t.Fatalf("limit %d: %d results, err %v; want %d", tc.limit, len(res), err, tc.want)
		}
	}
}

// FuzzSearchQuery drives arbitrary user text through the whole query path
// against a real index: no input may produce an error, and every result
// must point at real lines.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{
		"", " ", `"`, `""`, `"unterminated`, "*", "**", "a*", "dent*", "NEAR(", "NEAR(a b, 2)", "-", "--", "-dentist",
		"+", "^", "^dentist", "a AND", "OR", "NOT x", "(", ")", "{a b}", "col:dentist", "text:dentist", ":", "'", "\\",
		"dentist tea", "Dr. Okafor", "café", "日本語", "🙂 emoji", "\u0301", "\x00", "\xff\xfe", "a\nb\tc",
		strings.Repeat("dentist ", 100), strings.Repeat("(", 500),
	} {
		f.Add(q)
	}
	root := f.TempDir()
	writeFile(f, root, "memory/MEMORY.md", "# Memory\n\nDentist: Dr. Okafor.\r\nLikes tea, café au lait, 日本語のノート.\n")
	writeFile(f, root, "memory/2026-02-10.md", "- dentist at 3pm\n- buy tea\n\n```\nNEAR(code) \"quoted\" *star*\n```\n")
	s, err := Open(context.Background(), Options{Root: root, DisableWatcher: true, Now: func() time.Time { return fixedNow }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, q string) {
		for _, kind := range []string{"", "daily"} {
			res, err := s.Search(context.Background(), q, kind, 5)
			if err != nil {
				t.Fatalf("Search(%q): %v", q, err)
			}
			if res == nil {
				t.Fatalf("Search(%q) returned nil, want a (possibly empty) slice", q)
			}
			for _, r := range res {
				checkResult(t, root, r)
			}
		}
	})
}
