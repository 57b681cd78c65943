package memory

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"no final break", "a\nb", []string{"a", "b"}},
		{"final break adds no line", "a\nb\n", []string{"a", "b"}},
		{"crlf is one break", "a\r\nb\r\n", []string{"a", "b"}},
		{"mixed endings", "a\r\nb\nc", []string{"a", "b", "c"}},
		{"lone cr is content", "a\rb\n", []string{"a\rb"}},
		{"blank lines kept", "a\n\n\nb\n", []string{"a", "", "", "b"}},
		{"only a break", "\n", []string{""}},
		{"crlf blank lines", "\r\n\r\n", []string{"", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := splitLines(tc.in)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("splitLines(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestChunkLines(t *testing.T) {
	type span struct{ start, end int }
	tests := []struct {
		name string
		in   string
		want []span
	}{
		{"paragraphs split at blank lines", "one\ntwo\n\nthree\n", []span{{1, 2}, {4, 4}}},
		{"heading kept with its block", "# Title\n\nbody line\nmore\n\nnext para\n", []span{{1, 4}, {6, 6}}},
		{"consecutive headings", "# A\n## B\ntext\n", []span{{1, 1}, {2, 3}}},
		{"heading ends a paragraph", "text\n## H\nunder\n", []span{{1, 1}, {2, 3}}},
		{"list is one block", "- a\n- b\n  - c\n\n1. x\n2. y\n", []span{{1, 3}, {5, 6}}},
		{"code fence spans blank lines", "intro\n```go\nfunc a() {\n\n}\n```\nafter\n", []span{{1, 1}, {2, 6}, {7, 7}}},
		{"tilde fence needs matching close", "~~~~\n```\n~~~\n~~~~\n", []span{{1, 4}}},
		{"unclosed fence runs to end", "```\ncode\n\nmore\n", []span{{1, 4}}},
		{"heading inside fence is code", "```\n# not a heading\n```\n", []span{{1, 3}}},
		{"hash without space is text", "#tag\n#hashtag line\n", []span{{1, 2}}},
		{"indented 4 is not heading", "    # code\n", []span{{1, 1}}},
		{"crlf file", "# T\r\n\r\nbody\r\n\r\nnext\r\n", []span{{1, 3}, {5, 5}}},
		{"only blanks", "\n\n  \n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chunkLines(splitLines(tc.in))
			var spans []span
			for _, c := range got {
				spans = append(spans, span{c.LineStart, c.LineEnd})
			}
			if len(spans) != len(tc.want) {
				t.Fatalf("chunks %v, want %v", spans, tc.want)
			}
			for i := range spans {
				if spans[i] != tc.want[i] {
					t.Fatalf("chunks %v, want %v", spans, tc.want)
				}
			}
			checkChunks(t, tc.in, got)
		})
	}
}

func TestChunkLinesSplitsLongBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("line of a very long paragraph without breaks\n")
	}
	b.WriteString(strings.Repeat("x", 5000) + "\n")
	chunks := chunkLines(splitLines(b.String()))
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want the 101-line block split", len(chunks))
	}
	for _, c := range chunks {
		if n := c.LineEnd - c.LineStart + 1; n > maxChunkLines {
			t.Errorf("chunk %d-%d has %d lines", c.LineStart, c.LineEnd, n)
		}
		if len(c.Text) > maxChunkBytes && c.LineStart != c.LineEnd {
			t.Errorf("chunk %d-%d has %d bytes over several lines", c.LineStart, c.LineEnd, len(c.Text))
		}
	}
	if last := chunks[len(chunks)-1]; last.LineStart != 101 || last.LineEnd != 101 {
		t.Errorf("overlong single line should be its own chunk, got %d-%d", last.LineStart, last.LineEnd)
	}
	checkChunks(t, b.String(), chunks)
}

// checkChunks asserts the chunker's invariants: chunks are in order, do
// not overlap, each one's text is exactly its lines of the file, and every
// non-blank line is in some chunk.
func checkChunks(t testing.TB, in string, chunks []chunk) {
	t.Helper()
	lines := splitLines(in)
	covered := make([]bool, len(lines))
	prevEnd := 0
	for _, c := range chunks {
		if c.LineStart <= prevEnd || c.LineEnd < c.LineStart || c.LineEnd > len(lines) {
			t.Fatalf("bad chunk %d-%d after line %d (file has %d lines)", c.LineStart, c.LineEnd, prevEnd, len(lines))
		}
		if want := strings.Join(lines[c.LineStart-1:c.LineEnd], "\n"); c.Text != want {
			t.Fatalf("chunk %d-%d text %q, file lines %q", c.LineStart, c.LineEnd, c.Text, want)
		}
		if isBlank(lines[c.LineStart-1]) {
			t.Fatalf("chunk %d-%d starts with a blank line", c.LineStart, c.LineEnd)
		}
		for k := c.LineStart; k <= c.LineEnd; k++ {
			covered[k-1] = true
		}
		prevEnd = c.LineEnd
	}
	for i, l := range lines {
		if !covered[i] && !isBlank(l) {
			t.Fatalf("line %d %q is in no chunk", i+1, l)
		}
	}
}

func FuzzChunk(f *testing.F) {
	for _, s := range []string{
		"",
		"\n",
		"\r\n\r\n",
		"# Title\n\nParagraph one.\nStill one.\n\n## Sub\n- a\n- b\n",
		"```\nunclosed\n\n# not heading",
		"~~~python\nx = 1\n~~~\n\ttab\n",
		"```a`b\nnot a fence\n```\n",
		"    # indented\n   # three spaces\n####### seven\n",
		"a\rb\r\nc\n\r\n",
		"日本語の見出し\n\n# 見出し\n本文です。\n",
		strings.Repeat("word ", 1000),
		strings.Repeat("l\n", 200),
		"\xff\xfe invalid utf8\n# \xc3\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		chunks := chunkLines(splitLines(in))
		checkChunks(t, in, chunks)
		for _, c := range chunks {
			if utf8.ValidString(in) && !utf8.ValidString(c.Text) {
				t.Fatalf("chunk of valid UTF-8 is not UTF-8: %q", c.Text)
			}
		}
	})
}
