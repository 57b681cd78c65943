package textclean

import (
	"strings"
	"unicode/utf8"
)

// Snippet is text on one line (runs of white space become one space), cut
// to at most maxRunes characters with "…" marking the cut: session lists'
// last-message previews and names made from a message.
func Snippet(text string, maxRunes int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	cut, n := 0, 0
	for cut < len(text) && n < maxRunes {
		_, size := utf8.DecodeRuneInString(text[cut:])
		cut += size
		n++
	}
	return text[:cut] + "…"
}
