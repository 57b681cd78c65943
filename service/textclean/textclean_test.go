package textclean

import "testing"

func TestStripNUL(t *testing.T) {
	for in, want := range map[string]struct {
		out string
		n   int
	}{
		"":                  {"", 0},
		"plain":             {"plain", 0},
		"a\x00b\x00\x00c":   {"abc", 3},
		"\x00":              {"", 1},
		"{\"t\":\"x\x00\"}": {"{\"t\":\"x\"}", 1},
	} {
		out, n := StripNUL([]byte(in))
		if string(out) != want.out || n != want.n {
			t.Errorf("StripNUL(%q) = %q, %d; want %q, %d", in, out, n, want.out, want.n)
		}
	}
}

func TestSnippet(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  one\n two\tthree ", 20, "one two three"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 3, "abc…"},
		{"ééééé", 2, "éé…"}, // cut on characters, never inside one
		{"", 5, ""},
	} {
		if got := Snippet(c.in, c.n); got != c.want {
			t.Errorf("Snippet(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
