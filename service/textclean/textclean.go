// Package textclean removes NUL bytes from the text agents send, the one way
// the service does it everywhere (round-table responses, proxy answers and
// callbacks, external agents' callbacks): the bytes are removed and counted,
// the text is kept and the removal recorded. A NUL is a careless byte, not
// an attack, and never a reason to refuse or exclude what came with it.
package textclean

import "bytes"

// StripNUL returns b without its NUL bytes and how many there were. A body
// without any is returned as is.
func StripNUL(b []byte) ([]byte, int) {
	n := bytes.Count(b, []byte{0})
	if n == 0 {
		return b, 0
	}
	return bytes.ReplaceAll(b, []byte{0}, nil), n
}
