package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"time"

	"jarvis/service/netguard"
)

// Options configure a Client. Every field is optional.
type Options struct {
	// Client sends the requests. Its CheckRedirect is overridden (on a
	// copy) so that redirects are never followed. Default: a client with
	// 10 s dial and TLS-handshake timeouts and no overall timeout (each call
	// is bounded by its definition's timeout).
	Client *http.Client
	// Secrets resolves {{secret:name}} header references, typically from
	// the OS keyring. Nil: definitions referencing secrets fail with
	// ErrSecret.
	Secrets func(ref string) (string, error)
	// MaxResponse caps a response (a stream in total) for definitions
	// without maxResponseBytes. Default DefaultMaxResponse (1 MiB).
	MaxResponse int64
	// Logger receives one Debug line per successful call and one Warn line
	// per failed one; never a header value, a body or a secret.
	Logger *slog.Logger
	// Now is the clock for latencies and health times. Default time.Now.
	Now func() time.Time
	// Health receives the outcome of every call under Definition.HealthKey.
	// Default: a new tracker, available from Client.Health.
	Health *HealthTracker
}

// Client calls proxy agents. It is immutable after New and safe for
// concurrent use.
type Client struct {
	hc          *http.Client
	secrets     func(string) (string, error)
	maxResponse int64
	log         *slog.Logger
	now         func() time.Time
	health      *HealthTracker
}

// New returns a Client with opts' defaults filled in.
func New(opts Options) (*Client, error) {
	if opts.MaxResponse < 0 {
		return nil, fmt.Errorf("proxy: Options.MaxResponse must not be negative, got %d", opts.MaxResponse)
	}
	c := &Client{
		secrets:     opts.Secrets,
		maxResponse: opts.MaxResponse,
		log:         opts.Logger,
		now:         opts.Now,
		health:      opts.Health,
	}
	if c.maxResponse == 0 {
		c.maxResponse = DefaultMaxResponse
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.health == nil {
		c.health = NewHealthTracker(c.now)
	}
	if opts.Client != nil {
		hc := *opts.Client
		hc.CheckRedirect = noRedirect
		c.hc = &hc
	} else {
		c.hc = NewHTTPClient()
	}
	return c, nil
}

// NewHTTPClient returns the default client: redirects refused, 10 s dial
// and TLS-handshake timeouts, proxies from the environment, no overall
// timeout (the caller's context bounds each call). Every connection passes
// the service's one address check (service/netguard) at connect time.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = netguard.Dialer(10 * time.Second).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ExpectContinueTimeout = time.Second
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: t, CheckRedirect: noRedirect}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Health returns the tracker the client records into.
func (c *Client) Health() *HealthTracker { return c.health }

// HealthKey is the key under which calls with d are recorded: the profile
// name (unique per docs/protocols/proxy-agents.md), else the URL.
func (d Definition) HealthKey() string {
	if d.Profile.Name != "" {
		return d.Profile.Name
	}
	return d.URL
}

// errDeadline is the cause of a call's own timeout, telling it apart from
// a cancellation by the caller.
var errDeadline = errors.New("proxy: definition timeout elapsed")

// Call sends in to the agent and returns its answer.
//
// Synchronous definitions: the answer is the response of the request. If
// the agent streams (text/event-stream or application/x-ndjson), onChunk
// (if not nil) receives each message as it arrives, on the calling
// goroutine, and Call returns the stitched final answer when the agent
// sends it or the stream ends. The returned Response is Final.
//
// Async definitions: Call returns after the acknowledgement (any 2xx) with
// Pending set; the answer arrives through ParseCallback.
//
// Errors match ErrInvalid, ErrSecret, ErrTimeout, ErrUnreachable,
// ErrRedirect, ErrTooLarge or ErrMalformed, or are an *ErrStatus; a
// cancelled ctx gives ctx's error. Every outcome but a cancellation is
// recorded in the health tracker.
func (c *Client) Call(ctx context.Context, def Definition, in Input, onChunk func(Chunk)) (Response, error) {
	return c.call(ctx, def, in, onChunk, nil)
}

// recorder captures what the Test action shows.
type recorder struct {
	status      int
	contentType string
	requestBody []byte
	raw         limitedBuffer
}

func (c *Client) call(ctx context.Context, def Definition, in Input, onChunk func(Chunk), rec *recorder) (resp Response, err error) {
	start := c.now()
	status := 0
	defer func() {
		if errors.Is(err, context.Canceled) {
			return // the user cancelled: says nothing about the agent
		}
		c.health.Record(def.HealthKey(), err)
		attrs := []any{"agent", def.HealthKey(), "status", status, "elapsed", c.now().Sub(start)}
		if err != nil {
			// An error status carries an excerpt of the agent's body, which
			// goes into no log line.
			logged := any(err)
			var se *ErrStatus
			if errors.As(err, &se) {
				logged = fmt.Sprintf("external agent answered %d %s (body not logged)", se.Code, http.StatusText(se.Code))
			}
			c.log.Warn("proxy agent call failed", append(attrs, "err", logged)...)
		} else {
			c.log.Debug("proxy agent call", append(attrs, "pending", resp.Pending, "final", resp.Final)...)
		}
	}()

	cd, err := def.compile()
	if err != nil {
		return Response{}, err
	}
	body, err := requestBody(def, cd, in)
	if err != nil {
		return Response{}, err
	}
	if rec != nil {
		rec.requestBody = body
	}
	timeout := def.Timeout()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errDeadline)
	defer cancel()

	var br io.Reader
	if body != nil {
		br = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, cd.method, cd.url, br)
	if err != nil {
		return Response{}, &ValidationError{Field: "url", Problem: err.Error()}
	}
	if err := c.setHeaders(req, def, body != nil); err != nil {
		return Response{}, err
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return Response{}, transportError(ctx, timeout, err)
	}
	defer res.Body.Close()
	status = res.StatusCode

	limit := c.limit(def)
	var rd io.Reader = res.Body
	if rec != nil {
		rec.status, rec.contentType = res.StatusCode, res.Header.Get("Content-Type")
		rd = io.TeeReader(rd, &rec.raw)
	}
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return Response{}, &RedirectError{Code: res.StatusCode, Location: res.Header.Get("Location")}
	case res.StatusCode < 200 || res.StatusCode >= 300:
		b, _ := io.ReadAll(io.LimitReader(rd, 4*excerptLimit))
		return Response{}, &ErrStatus{Code: res.StatusCode, Body: excerpt(b, excerptLimit)}
	}
	if res.ContentLength > limit {
		return Response{}, &TooLargeError{Limit: limit}
	}
	rd = &capReader{r: rd, limit: limit}

	if def.Async {
		b, err := io.ReadAll(rd)
		if err != nil {
			return Response{}, readError(ctx, timeout, err)
		}
		return ack(b, cd.mapping), nil
	}
	switch kind := streamKindOf(res.Header.Get("Content-Type")); kind {
	case sseStream, ndjsonStream:
		resp, err = readStream(rd, kind, limit, cd.mapping, onChunk)
		if err != nil {
			return Response{}, readError(ctx, timeout, err)
		}
		return resp, nil
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return Response{}, readError(ctx, timeout, err)
	}
	d, err := decode(b, cd.mapping)
	if err != nil {
		return Response{}, err
	}
	resp = d.response()
	resp.Final = true
	return resp, nil
}

// ack reads an async acknowledgement. Its body is optional and not
// required to follow the protocol; a message id or status in it is kept.
func ack(b []byte, m compiledMapping) Response {
	r := Response{Pending: true}
	if d, err := decode(b, m); err == nil {
		r.MessageID, r.Status, r.ConversationState, r.Raw = d.messageID, d.status, d.state, d.raw
	}
	return r
}

func readStream(rd io.Reader, kind streamKind, limit int64, m compiledMapping, onChunk func(Chunk)) (Response, error) {
	var (
		turn  Turn
		seq   int
		final Response
		done  bool
	)
	handle := func(msg []byte) (bool, error) {
		if isDone(msg) {
			return true, nil
		}
		d, err := decode(msg, m)
		if err != nil {
			var me *MalformedError
			if errors.As(err, &me) {
				me.Reason = fmt.Sprintf("stream message %d: %s", seq, me.Reason)
			}
			return false, err
		}
		if onChunk != nil {
			onChunk(d.chunk(seq))
		}
		seq++
		r, _ := turn.Add(d.response()) // cannot be closed: reading stops at the final message
		if r.Final {
			final, done = r, true
		}
		return done, nil
	}
	var err error
	if kind == sseStream {
		err = readSSE(rd, limit, handle)
	} else {
		err = readNDJSON(rd, limit, handle)
	}
	switch {
	case err != nil:
		return Response{}, err
	case done:
		return final, nil
	case seq == 0:
		return Response{}, &MalformedError{Reason: "the stream ended without a message"}
	}
	return turn.Finish()
}

func (c *Client) limit(def Definition) int64 {
	if def.MaxResponseBytes > 0 {
		return def.MaxResponseBytes
	}
	return c.maxResponse
}

func (c *Client) setHeaders(req *http.Request, def Definition, hasBody bool) error {
	req.Header.Set("User-Agent", "jarvis-proxy/1")
	if def.Stream != nil && def.Stream.Enable && !def.Async {
		req.Header.Set("Accept", "text/event-stream, application/x-ndjson, application/json")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	resolve := c.secrets
	if resolve == nil {
		resolve = func(string) (string, error) { return "", errors.New("no secret store configured") }
	}
	for name, value := range def.Headers {
		v, err := expandSecrets(value, resolve) // syntax already checked by compile
		if err != nil {
			return fmt.Errorf("headers.%s: %w", name, err)
		}
		req.Header.Set(name, v)
	}
	return nil
}

// RenderBody returns the body Call would send for in: the Agent Protocol
// request, or the definition's rendered template; nil for a GET. The
// proxy-agent editor can show it as a preview.
func RenderBody(def Definition, in Input) ([]byte, error) {
	cd, err := def.compile()
	if err != nil {
		return nil, err
	}
	return requestBody(def, cd, in)
}

// requestBody renders the body of the request, nil for a GET.
func requestBody(def Definition, cd *compiled, in Input) ([]byte, error) {
	if cd.method == "GET" {
		return nil, nil
	}
	debug := in.Debug || def.Debug != nil && def.Debug.Enable
	stream := def.Stream != nil && def.Stream.Enable && !def.Async
	meta := mergeMetadata(def.Metadata, in.Metadata)
	if cd.body != nil {
		b, err := cd.body.render(templateVars{
			Input: in.Text, SessionID: in.SessionID, UserID: in.UserID, CallbackURL: in.CallbackURL,
			Debug: debug, Stream: stream, Metadata: meta,
		})
		if err != nil {
			return nil, &ValidationError{Field: "body", Problem: err.Error()}
		}
		return b, nil
	}
	r := AgentRequest{
		SessionIdentity: []Identity{{Type: "sessionReference", Value: in.SessionID}, {Type: "userReference", Value: in.UserID}},
		Input:           []Part{{Type: "text", Content: in.Text}},
		Metadata:        meta,
		CallbackURL:     in.CallbackURL,
	}
	if debug {
		mode := "thoughts"
		if def.Debug != nil && def.Debug.DebugMode != "" {
			mode = def.Debug.DebugMode
		}
		r.Debug = &DebugOptions{Enable: true, DebugMode: mode}
	}
	if stream {
		r.Stream = &StreamOptions{Enable: true, StreamMode: "messages"}
	}
	b, err := marshalJSON(r)
	if err != nil {
		return nil, fmt.Errorf("proxy: encoding the request (metadata not JSON-encodable?): %w", err)
	}
	return b, nil
}

func mergeMetadata(base, over map[string]any) map[string]any {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	m := make(map[string]any, len(base)+len(over))
	maps.Copy(m, base)
	maps.Copy(m, over)
	return m
}

// transportError classifies a failure to get a response.
func transportError(ctx context.Context, timeout time.Duration, err error) error {
	if e := ctxError(ctx, timeout); e != nil {
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// readError classifies a failure while reading the response body.
func readError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrMalformed) {
		return err
	}
	if e := ctxError(ctx, timeout); e != nil {
		return e
	}
	return fmt.Errorf("%w: connection lost while reading the answer: %v", ErrUnreachable, err)
}

func ctxError(ctx context.Context, timeout time.Duration) error {
	cause := context.Cause(ctx)
	switch {
	case cause == nil:
		return nil
	case cause == errDeadline:
		return fmt.Errorf("%w: no complete answer within %s", ErrTimeout, timeout)
	case errors.Is(cause, context.DeadlineExceeded):
		return fmt.Errorf("%w: the caller's deadline passed", ErrTimeout)
	}
	return fmt.Errorf("proxy: call cancelled: %w", cause)
}

// limitedBuffer keeps the first max bytes written to it and counts the rest.
type limitedBuffer struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room < len(p) {
		l.truncated = true
		if room > 0 {
			l.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}
