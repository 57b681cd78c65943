package proxy

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"strings"
)

// Streamed answers. In docs/protocols/proxy-agents.md's "messages" mode the agent sends a series
// of Agent Protocol responses, each with part of the output, and finally
// the stitched whole under sessionInfo.output. They may come as Server-Sent
// Events (each event's data is one JSON message; "[DONE]" ends the stream)
// or as NDJSON (one JSON message per line).

type streamKind int

const (
	notStream streamKind = iota
	sseStream
	ndjsonStream
)

func streamKindOf(contentType string) streamKind {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return notStream
	}
	switch mt {
	case "text/event-stream":
		return sseStream
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines":
		return ndjsonStream
	}
	return notStream
}

// messageFunc receives one streamed message; stop ends reading.
type messageFunc func(msg []byte) (stop bool, err error)

// newLineScanner splits on \n, \r\n or a lone \r (all three end an SSE
// line). Lines are bounded by the response cap enforced underneath.
func newLineScanner(r io.Reader, max int64) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	if max > 1<<30 {
		max = 1 << 30
	}
	sc.Buffer(make([]byte, 0, 4096), int(max)+2)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && len(data) == 0 {
			return 0, nil, nil
		}
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			if data[i] == '\n' {
				return i + 1, data[:i], nil
			}
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a \n may follow the \r
		}
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	return sc
}

// readSSE dispatches the data of each event. Comments, ids, retry fields
// and event names are ignored: every event carries a message. An event left
// open at the end of the stream is still dispatched.
func readSSE(r io.Reader, max int64, fn messageFunc) error {
	sc := newLineScanner(r, max)
	var data bytes.Buffer
	hasData := false
	dispatch := func() (bool, error) {
		if !hasData {
			return false, nil
		}
		msg := bytes.TrimSuffix(data.Bytes(), []byte("\n"))
		data.Reset()
		hasData = false
		if len(bytes.TrimSpace(msg)) == 0 {
			return false, nil
		}
		return fn(msg)
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if stop, err := dispatch(); stop || err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) == "data" {
			data.Write(value)
			data.WriteByte('\n')
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	_, err := dispatch()
	return err
}

// readNDJSON dispatches each non-blank line.
func readNDJSON(r io.Reader, max int64, fn messageFunc) error {
	sc := newLineScanner(r, max)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if stop, err := fn(line); stop || err != nil {
			return err
		}
	}
	return sc.Err()
}

// isDone reports the "[DONE]" sentinel some SSE agents send last.
func isDone(msg []byte) bool {
	return strings.TrimSpace(string(msg)) == "[DONE]"
}

// capReader fails with a *TooLargeError once more than limit bytes have
// been read, returning only the bytes up to the limit.
type capReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		// Probe one byte to tell "exactly at the limit" from "over it".
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			c.n += int64(n)
			return 0, &TooLargeError{Limit: c.limit}
		}
		return 0, err
	}
	if rem := c.limit - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
