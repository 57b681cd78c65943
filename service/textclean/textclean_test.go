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
