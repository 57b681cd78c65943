package cliagent

import (
	"bytes"
	"strings"
)

// lineWriter splits the CLI's stdout into lines and hands each non-blank
// line, without its line ending, to onLine. It is the exec.Cmd's Stdout, so
// os/exec's copying goroutine calls it, and Wait returns only after the last
// Write. A line longer than max is dropped (onSkip gets its length) instead
// of failing the turn: one oversized tool-output echo should not cost the
// answer. onLine must not keep the slice.
type lineWriter struct {
	max    int
	onLine func([]byte)
	onSkip func(n int)

	buf      []byte
	skipping bool
	skipped  int
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		chunk := p
		i := bytes.IndexByte(p, '\n')
		if i >= 0 {
			chunk, p = p[:i], p[i+1:]
		} else {
			p = nil
		}
		switch {
		case w.skipping:
			w.skipped += len(chunk)
		case len(w.buf)+len(chunk) > w.max:
			w.skipping, w.skipped = true, len(w.buf)+len(chunk)
			w.buf = nil
		default:
			w.buf = append(w.buf, chunk...)
		}
		if i >= 0 {
			w.endLine()
		}
	}
	return n, nil
}

// flush delivers a final line that had no newline. Call it after Wait.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 || w.skipping {
		w.endLine()
	}
}

func (w *lineWriter) endLine() {
	if w.skipping {
		w.skipping = false
		if w.onSkip != nil {
			w.onSkip(w.skipped)
		}
	} else if line := bytes.TrimSpace(w.buf); len(line) > 0 {
		w.onLine(line)
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil // don't hold a huge line's buffer for the rest of the turn
	} else {
		w.buf = w.buf[:0]
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string { return strings.ToValidUTF8(string(b.buf), "\uFFFD") }
