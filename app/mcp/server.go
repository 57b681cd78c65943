package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
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
	StateInvalid  = "invalid" // the entry cannot run as written (its error says why)
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
	ctx    context.Context // set with cancel before it runs; nil: not started
	cancel context.CancelFunc
	done   chan struct{}
	// approval: the entry waits for the user's approval (never started).
	approval *Approval

	mu       sync.Mutex
	state    string
	err      string
	session  *sdk.ClientSession
	tools    []*sdk.Tool
	restarts int
	logs     []string // the server's last log notifications, oldest first
	// signingIn: the user's sign-in (OAuth) is under way.
	signingIn bool
	signInErr string // why the last sign-in failed
	// signedIn: a sign-in was stored when it last connected.
	signedIn bool

	// signIn: why the server waits for a sign-in (set by the bearer
	// transport on a 401 it could not answer); nil: it does not.
	signIn atomic.Pointer[string]

	// httpTasks runs the task calls of a Streamable HTTP server
	// (taskhttp.go); nil for stdio and SSE, whose connection does.
	httpTasks atomic.Pointer[httpTasks]
}

// maxLogs is how many of a server's log notifications the panel keeps.
const maxLogs = 50

// logged keeps a server's log notification for the panel and writes it to
// the desktop's log.
func (s *server) logged(p *sdk.LoggingMessageParams) {
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	line := string(p.Level) + ": " + data
	if p.Logger != "" {
		line = string(p.Level) + " " + p.Logger + ": " + data
	}
	s.m.log.Info("mcp: server log", "server", s.cfg.Label, "level", p.Level, "logger", p.Logger, "data", data)
	s.mu.Lock()
	s.logs = append(s.logs, line)
	if len(s.logs) > maxLogs {
		s.logs = append([]string(nil), s.logs[len(s.logs)-maxLogs:]...)
	}
	s.mu.Unlock()
	s.m.changed()
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
		s.signIn.Store(nil)
		err := s.connectOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if why := s.signIn.Load(); why != nil {
			// Nothing to retry until the user signs in (SignIn restarts it).
			s.m.log.Warn("mcp server waits for a sign-in", "server", s.cfg.Label, "why", *why)
			s.set(StateSignIn, *why)
			<-ctx.Done()
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
	t, stop, exited, err := s.transport(cctx)
	if err != nil {
		return err
	}
	defer stop()
	// Elicitation in both modes (the window asks the user; headless
	// declines).
	caps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}}
	if len(s.m.opts.Roots) > 0 {
		caps.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "jarvis", Version: "1"}, &sdk.ClientOptions{
		Capabilities: caps,
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
		ElicitationHandler: func(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return s.elicit(ctx, r.Params)
		},
		CreateMessageHandler: func(ctx context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return s.sample(ctx, r.Params) // sampling.go
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			s.logged(r.Params)
		},
	})
	for _, r := range s.m.opts.Roots {
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: r}).String(), Name: filepath.Base(r)})
	}
	ictx, icancel := context.WithTimeout(cctx, s.m.opts.InitTimeout)
	cs, err := client.Connect(ictx, t, nil)
	timedOut := errors.Is(ictx.Err(), context.DeadlineExceeded) // before icancel, which would set Err
	icancel()
	if err != nil {
		if exit := exited(time.Second); exit != "" {
			return fmt.Errorf("the server exited during initialize (%s)", exit)
		}
		if timedOut && cctx.Err() == nil {
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

// elicit is a server's request for the user's input: Options.Elicit's, or
// declined (decline is the default: nothing reaches a server unless the
// user gives it).
func (s *server) elicit(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	s.m.mu.Lock()
	ask := s.m.opts.Elicit
	s.m.mu.Unlock()
	if ask != nil {
		// The question goes away when the server is stopped (or Jarvis
		// closes), not only when the server withdraws it.
		if s.ctx != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(s.ctx, cancel)()
		}
		label := s.cfg.Label
		if label == "" {
			label = s.cfg.Name
		}
		return ask(ctx, label, p)
	}
	s.m.log.Warn("mcp: a server asked for the user's input; declined (no one to ask here)", "server", s.cfg.Label, "mode", p.Mode, "message", p.Message, "url", p.URL)
	return &sdk.ElicitResult{Action: "decline"}, nil
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
	s.listTaskSupport(ctx, cs)
	s.mu.Lock()
	s.tools = all
	s.mu.Unlock()
	s.m.toolsListed(s.cfg.Name, all, offersResources(cs))
	return nil
}

// transport builds the connection to the server: a child process for a
// stdio server, the Streamable HTTP client for a url (the legacy HTTP+SSE
// client for type "sse"). stop ends it (the
// child's whole process group); exited waits up to d for the child to end
// and says how it ended ("" while it runs, and for a url).
func (s *server) transport(ctx context.Context) (t sdk.Transport, stop func(), exited func(d time.Duration) string, err error) {
	s.httpTasks.Store(nil)
	if s.cfg.IsHTTP() {
		headers, err := resolve(s.cfg.Name, s.cfg.Headers, s.m.opts.Secret)
		if err != nil {
			return nil, nil, nil, err
		}
		hc := s.m.opts.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		c := *hc
		c.Transport = headerTransport{base: hc.Transport, headers: headers}
		if c.Transport, err = s.oauthTransport(c.Transport, hc); err != nil {
			return nil, nil, nil, err
		}
		if s.cfg.IsSSE() {
			t := longLived{Transport: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: &c}, ctx: ctx}
			return taskTransport{Transport: t, s: s}, func() {}, func(time.Duration) string { return "" }, nil
		}
		s.useHTTPTasks(s.cfg.URL, &c)
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &c, MaxRetries: -1}, func() {}, func(time.Duration) string { return "" }, nil
	}
	env, err := resolve(s.cfg.Name, s.cfg.Env, s.m.opts.Secret)
	if err != nil {
		return nil, nil, nil, err
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
	if s.cfg.Unsandboxed() {
		// Approved as such (approval.go): the user confirmed it.
		s.m.log.Warn("mcp: server runs without the sandbox, with your full access, as its approved entry asks (\"sandbox\": false)", "server", s.cfg.Label)
	}
	if s.m.opts.Confine != nil {
		if cmd, release, err = s.m.opts.Confine(s.cfg, cmd); err != nil {
			return nil, nil, nil, err
		}
	}
	ownGroup(cmd)
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		release()
		return nil, nil, nil, fmt.Errorf("starting %s: %w", s.cfg.Command, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	pr, pw := io.Pipe()
	go filterStdout(stdout, pw, s.stderr)
	stop = func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			killGroup(cmd)
			<-done
		}
		killGroup(cmd) // children the server left behind
		release()
		pr.Close()
	}
	exited = func(d time.Duration) string {
		select {
		case <-done:
		case <-time.After(d):
			return ""
		}
		if waitErr == nil {
			return "exit status 0"
		}
		return waitErr.Error()
	}
	go func() {
		select {
		case <-done:
			pw.CloseWithError(io.EOF)
		case <-ctx.Done():
		}
	}()
	return taskTransport{Transport: &sdk.IOTransport{Reader: pr, Writer: stdin}, s: s}, stop, exited, nil
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

// longLived connects its Transport with ctx, not with the context of
// Connect: the legacy SSE transport's event stream lives as long as the
// context it was opened with, and Connect's is the initialize timeout's.
type longLived struct {
	sdk.Transport
	ctx context.Context
}

func (l longLived) Connect(context.Context) (sdk.Connection, error) {
	return l.Transport.Connect(l.ctx)
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
