package acpagent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// guard sits between the agent's stdout and the SDK's reader, which skips a
// line it cannot parse and would leave the turn waiting forever. Each line
// must be one JSON-RPC 2.0 message of at most max bytes, and a request or
// notification must name a method a client serves; anything else breaks
// the connection with a clear error, and the process is replaced.
type guard struct {
	out    *io.PipeReader
	broken chan struct{}

	once sync.Once
	mu   sync.Mutex
	err  error
	// updates counts the session/update notifications passed on.
	updates atomic.Int64
}

// clientMethods are the methods an agent may call on its client (ACP v1),
// besides "_" extensions and "$/" protocol notifications.
var clientMethods = map[string]bool{
	"session/update": true, "session/request_permission": true,
	"fs/read_text_file": true, "fs/write_text_file": true,
	"terminal/create": true, "terminal/output": true, "terminal/release": true,
	"terminal/wait_for_exit": true, "terminal/kill": true,
}

func newGuard(src io.Reader, max int) *guard {
	pr, pw := io.Pipe()
	g := &guard{out: pr, broken: make(chan struct{})}
	go g.run(src, pw, max)
	return g
}

func (g *guard) error() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *guard) fail(err error) {
	g.once.Do(func() {
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
		close(g.broken)
	})
}

func (g *guard) run(src io.Reader, pw *io.PipeWriter, max int) {
	r := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			g.fail(fmt.Errorf("a message longer than %d bytes", max))
			_, _ = io.Copy(io.Discard, r) // let the agent finish writing; it is stopped
			pw.CloseWithError(g.error())
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(strings.TrimSpace(string(line))) > 0 {
			if verr := g.check(line); verr != nil {
				g.fail(verr)
				_, _ = io.Copy(io.Discard, r)
				pw.CloseWithError(verr)
				return
			}
			if _, werr := pw.Write(line); werr != nil {
				return
			}
			if line[len(line)-1] != '\n' {
				_, _ = pw.Write([]byte{'\n'})
			}
		}
		line = line[:0]
		if err != nil {
			pw.CloseWithError(io.EOF)
			return
		}
	}
}

// check validates one message.
func (g *guard) check(line []byte) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("a message that is not JSON-RPC (%s): %.120q", err, line)
	}
	if m.JSONRPC != "2.0" {
		return fmt.Errorf("a message without \"jsonrpc\": \"2.0\": %.120q", line)
	}
	if m.Method == nil {
		if len(m.ID) == 0 || (len(m.Result) == 0 && len(m.Error) == 0) {
			return fmt.Errorf("a message that is neither a request nor a response: %.120q", line)
		}
		return nil
	}
	name := *m.Method
	if name == "session/update" && len(m.ID) == 0 {
		g.updates.Add(1)
	}
	if clientMethods[name] || strings.HasPrefix(name, "_") || strings.HasPrefix(name, "$/") {
		return nil
	}
	return fmt.Errorf("an unknown method %q", name)
}

// tailBuffer keeps the last max bytes of the agent's stderr; written by
// os/exec's copier while a turn may read it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ToValidUTF8(string(b.buf), "\uFFFD")
}
