package externalrt

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSanitizeExternalText: the cleaner of external agents' callback bodies
// keeps every valid byte, drops exactly the bytes it counts, and leaves valid
// UTF-8 without NUL.
func FuzzSanitizeExternalText(f *testing.F) {
	for _, s := range []string{"", "plain", "nul\x00byte", "bad\xff\xfeutf8", "\xc3(", "\xe2\x82", "é\x00\xed\xa0\x80", "\x00\x00\x00", "ok \U0001F600"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, rep := SanitizeText(in)
		if !utf8.ValidString(out) || strings.IndexByte(out, 0) >= 0 {
			t.Fatalf("%q -> %q: not clean", in, out)
		}
		if len(out)+rep.InvalidUTF8Bytes+rep.NULBytes != len(in) {
			t.Fatalf("%q -> %q: %d kept + %+v removed != %d", in, out, len(out), rep, len(in))
		}
		if utf8.Valid(in) && bytes.IndexByte(in, 0) < 0 && (out != string(in) || rep.Changed()) {
			t.Fatalf("clean input %q changed to %q (%+v)", in, out, rep)
		}
		if again, rep2 := SanitizeText([]byte(out)); again != out || rep2.Changed() {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}
