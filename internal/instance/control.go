package instance

// The control socket: the two-way half of the handover. The process that
// holds the data dir's lock (a window or `jarvis --headless`) listens on
// <data-dir>/jarvis.sock (mode 0600, in the 0700 data dir; on Linux a
// connection from another user is refused too), and a command run beside
// it (`jarvis undo`) sends it one request and prints its answer. Each
// connection carries one JSON request line and one JSON response line.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// SocketFile is the control socket's name in the data dir.
const SocketFile = "jarvis.sock"

// ErrNotListening means no process answers on the data dir's control
// socket (none runs, or it is one that does not listen).
var ErrNotListening = errors.New("no running Jarvis answers on this data dir's control socket")

// maxRequest caps a request line.
const maxRequest = 1 << 20

// Handler answers one request: req is its JSON, the result is marshalled
// as the response.
type Handler func(ctx context.Context, op string, req json.RawMessage) (any, error)

// envelope is a request or response line.
type envelope struct {
	Op    string          `json:"op,omitempty"`
	Body  json.RawMessage `json:"body,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Server is a listening control socket.
type Server struct {
	ln     net.Listener
	path   string
	handle Handler
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Listen opens the control socket of dataDir and answers each request with
// handle. Only the holder of the data dir's lock (Acquire) may call it: a
// socket file left by a process that died is removed first.
func Listen(dataDir string, handle Handler) (*Server, error) {
	path := filepath.Join(dataDir, SocketFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The data dir is the owner's alone (0700), so nobody else reaches the
	// socket in the moment before its own mode is set; the umask is not
	// tightened around the bind, as it is the whole process's.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, path: path, handle: handle, ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops listening, cancels the requests being answered, waits for
// them, and removes the socket file.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.cancel()
	s.wg.Wait()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

func (s *Server) serve(c net.Conn) {
	reply := func(e envelope) {
		b, _ := json.Marshal(e)
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.Write(append(b, '\n'))
	}
	if err := samePeer(c); err != nil {
		reply(envelope{Error: err.Error()})
		return
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, maxRequest)).ReadBytes('\n')
	if err != nil {
		reply(envelope{Error: "control socket: the request was not read: " + err.Error()})
		return
	}
	c.SetReadDeadline(time.Time{})
	var req envelope
	if err := json.Unmarshal(line, &req); err != nil || req.Op == "" {
		reply(envelope{Error: "control socket: a request is one JSON line with an op"})
		return
	}
	out, err := s.handle(s.ctx, req.Op, req.Body)
	if err != nil {
		reply(envelope{Error: err.Error()})
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		reply(envelope{Error: err.Error()})
		return
	}
	reply(envelope{Body: b})
}

// Call sends op and req to the process listening on dataDir's control
// socket and decodes its answer into resp. It fails with ErrNotListening
// when nothing listens there, and with the handler's error as it said it.
func Call(ctx context.Context, dataDir, op string, req, resp any) error {
	path := filepath.Join(dataDir, SocketFile)
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		// No socket file, nobody accepting on it, or a path too long to
		// be a socket's (Listen failed there too): nothing listens.
		_, serr := os.Stat(path)
		if errors.Is(serr, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("%w (%v)", ErrNotListening, err)
		}
		return fmt.Errorf("control socket: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(envelope{Op: op, Body: body})
	if _, err := c.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	ans, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("control socket: no answer: %w", err)
	}
	var e envelope
	if err := json.Unmarshal(ans, &e); err != nil {
		return fmt.Errorf("control socket: the answer is not JSON: %w", err)
	}
	if e.Error != "" {
		return errors.New(e.Error)
	}
	return json.Unmarshal(e.Body, resp)
}
