package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/internal/childenv"
)

// Server states, as the panel shows them.
const (
	StateStarting = "starting"
	StateReady    = "ready"
	StateFailed   = "failed"
	StateOff      = "off"
)

// tail keeps the last bytes written to it: a server's stderr (and any
// stdout noise) for the error view.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// server is one configured MCP server and its current connection.
type server struct {
	m      *Manager
	cfg    ServerConfig
	stderr *tail
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	state    string
	err      string
	session  *sdk.ClientSession
	tools    []*sdk.Tool
	restarts int
}

func (s *server) set(state, err string) {
	s.mu.Lock()
	s.state, s.err = state, err
	s.mu.Unlock()
	s.m.changed()
}

func (s *server) current() *sdk.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// run keeps the server connected until ctx ends: a server that exits or
// fails to start is started again after a pause that doubles each time
// (from Options.Backoff up to a minute) and starts over once a connection
// has lasted a minute.
func (s *server) run(ctx context.Context) {
	defer close(s.done)
	backoff := s.m.opts.Backoff
	for ctx.Err() == nil {
		s.set(StateStarting, "")
		started := time.Now()
		err := s.connectOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		msg := err.Error()
		if t := s.stderr.String(); t != "" {
			msg += "\n" + t
		}
		s.mu.Lock()
		s.restarts++
		s.mu.Unlock()
		s.m.log.Warn("mcp server stopped", "server", s.cfg.Name, "err", err, "retry_in", backoff)
		s.set(StateFailed, msg)
		if time.Since(started) > time.Minute {
			backoff = s.m.opts.Backoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// connectOnce starts (or dials) the server, initializes within the
// initialize timeout, lists its tools and waits until the connection ends.
func (s *server) connectOnce(ctx context.Context) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, stop, err := s.transport(cctx)
	if err != nil {
		return err
	}
	defer stop()
	client := sdk.NewClient(&sdk.Implementation{Name: "jarvis", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{}, // no roots, no sampling, no elicitation
		ToolListChangedHandler: func(ctx context.Context, _ *sdk.ToolListChangedRequest) {
			// Off the session's reader: listing waits for the reply it reads.
			go func() {
				if err := s.refresh(cctx); err != nil {
					s.m.log.Warn("mcp: re-listing tools after list_changed failed", "server", s.cfg.Name, "err", err)
				}
			}()
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			s.m.progress(r.Params)
		},
	})
	ictx, icancel := context.WithTimeout(cctx, s.m.opts.InitTimeout)
	cs, err := client.Connect(ictx, t, nil)
	icancel()
	if err != nil {
		if ictx.Err() != nil && cctx.Err() == nil {
			return fmt.Errorf("the server did not finish initialize within %s", s.m.opts.InitTimeout)
		}
		return fmt.Errorf("initialize failed: %w", err)
	}
	defer cs.Close()
	s.mu.Lock()
	s.session = cs
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.session, s.tools = nil, nil
		s.mu.Unlock()
	}()
	lctx, lcancel := context.WithTimeout(cctx, s.m.opts.InitTimeout)
	err = s.refresh(lctx)
	lcancel()
	if err != nil {
		return fmt.Errorf("listing its tools failed: %w", err)
	}
	s.set(StateReady, "")
	werr := make(chan error, 1)
	go func() { werr <- cs.Wait() }()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-werr:
		if err == nil {
			err = errors.New("the server closed the connection")
		}
		return fmt.Errorf("the server stopped: %w", err)
	}
}

// refresh lists the server's tools (every page) and updates the catalogue.
func (s *server) refresh(ctx context.Context) error {
	cs := s.current()
	if cs == nil {
		return errors.New("not connected")
	}
	var all []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		all = append(all, t)
	}
	s.mu.Lock()
	s.tools = all
	s.mu.Unlock()
	s.m.toolsListed(s.cfg.Name, all)
	return nil
}

// transport builds the connection to the server: a child process for a
// stdio server, the Streamable HTTP client for a url. stop ends it (the
// child's whole process group).
func (s *server) transport(ctx context.Context) (sdk.Transport, func(), error) {
	if s.cfg.IsHTTP() {
		headers, err := resolve(s.cfg.Headers, s.m.opts.Secret)
		if err != nil {
			return nil, nil, err
		}
		hc := s.m.opts.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		c := *hc
		c.Transport = headerTransport{base: hc.Transport, headers: headers}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &c, MaxRetries: -1}, func() {}, nil
	}
	env, err := resolve(s.cfg.Env, s.m.opts.Secret)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	// The user's own environment, minus Jarvis's secrets, plus the server's
	// configured variables (which may carry its own credentials).
	cmd.Env = childenv.Scrub(os.Environ(), childenv.JarvisSecrets)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	release := func() {}
	if s.m.opts.Confine != nil {
		if cmd, release, err = s.m.opts.Confine(s.cfg, cmd); err != nil {
			return nil, nil, err
		}
	}
	ownGroup(cmd)
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		release()
		return nil, nil, fmt.Errorf("starting %s: %w", s.cfg.Command, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	pr, pw := io.Pipe()
	go filterStdout(stdout, pw, s.stderr)
	stop := func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
			killGroup(cmd)
			<-exited
		}
		killGroup(cmd) // children the server left behind
		release()
		pr.Close()
	}
	go func() {
		select {
		case <-exited:
			pw.CloseWithError(io.EOF)
		case <-ctx.Done():
		}
	}()
	return &sdk.IOTransport{Reader: pr, Writer: stdin}, stop, nil
}

// filterStdout passes the server's JSON-RPC lines on and moves anything
// else (a banner, a debug print before initialize) to the stderr tail: the
// protocol reserves stdout for messages, and some servers print anyway.
func filterStdout(r io.Reader, w *io.PipeWriter, noise io.Writer) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if t[0] == '{' || t[0] == '[' {
				if _, werr := w.Write(append(t, '\n')); werr != nil {
					return
				}
			} else {
				fmt.Fprintf(noise, "stdout: %s\n", t)
			}
		}
		if err != nil {
			w.CloseWithError(io.EOF)
			return
		}
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return base.RoundTrip(r)
}
