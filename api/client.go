package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	sse "github.com/tmaxmax/go-sse"
)

// StatusError is a non-2xx answer from the service.
type StatusError struct {
	Status int
	Err    Error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("service: %d %s: %s", e.Status, e.Err.Code, e.Err.Message)
}

// Client calls the service. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client for the service at baseURL (e.g.
// "http://127.0.0.1:8765") authenticating with token. hc may be nil.
func NewClient(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc}
}

// BaseURL returns the service URL.
func (c *Client) BaseURL() string { return c.base }

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if method == http.MethodPost {
		// A key per request makes the POST safe to send twice: Go's Transport
		// then retries it on a kept-alive connection the server closed under
		// it (it retries only idempotent requests), and the service answers a
		// replayed key with the first outcome instead of a second turn or
		// tool result.
		req.Header.Set(IdempotencyKeyHeader, newIdempotencyKey())
	}
	return req, nil
}

// IdempotencyKeyHeader is the header that makes a POST safe to replay.
const IdempotencyKeyHeader = "Idempotency-Key"

func newIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Do sends a JSON request and decodes a JSON answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return err
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
}

func checkStatus(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	var eb ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Code == "" {
		eb.Error = Error{Code: "http_" + fmt.Sprint(resp.StatusCode), Message: strings.TrimSpace(string(b))}
	}
	return &StatusError{Status: resp.StatusCode, Err: eb.Error}
}

// Health calls GET /health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.Do(ctx, http.MethodGet, "/health", nil, &h)
}

// CreateSession calls POST /v1/sessions.
func (c *Client) CreateSession(ctx context.Context, r CreateSessionRequest) (CreateSessionResponse, error) {
	var out CreateSessionResponse
	return out, c.Do(ctx, http.MethodPost, "/v1/sessions", r, &out)
}

// Chat sends a message and waits for the whole answer (stream=false).
func (c *Client) Chat(ctx context.Context, sessionID, text string) (ChatResponse, error) {
	var out ChatResponse
	r := ChatRequest{GeneralSessionID: sessionID, Mode: "general", Message: Message{Parts: []MessagePart{{Type: "text", Text: text}}}}
	return out, c.Do(ctx, http.MethodPost, "/v1/chat", r, &out)
}

// ChatStream sends a message with stream=true and calls fn for each event of
// the turn until the stream ends or fn returns an error.
func (c *Client) ChatStream(ctx context.Context, sessionID, text string, fn func(StreamEvent) error) error {
	return c.ChatStreamMessage(ctx, sessionID, Message{Parts: []MessagePart{{Type: "text", Text: text}}}, fn)
}

// ChatStreamMessage is ChatStream with a message of several parts (attachments).
func (c *Client) ChatStreamMessage(ctx context.Context, sessionID string, m Message, fn func(StreamEvent) error) error {
	return c.ChatStreamRequest(ctx, ChatRequest{GeneralSessionID: sessionID, Mode: "general", Message: m}, fn)
}

// ChatStreamRequest is ChatStream with the whole request (a new version of
// a turn: ReplacesTurnID); Stream is set.
func (c *Client) ChatStreamRequest(ctx context.Context, r ChatRequest, fn func(StreamEvent) error) error {
	r.Stream = true
	req, err := c.newRequest(ctx, http.MethodPost, "/v1/chat", r)
	if err != nil {
		return err
	}
	return c.readStream(req, fn)
}

// Stream follows a session's event stream (GET /v1/stream) from after
// lastEventID ("" for only new events) until ctx ends, the server closes the
// stream, or fn returns an error. go-sse's reader does not surface comments
// (heartbeats): a caller that needs liveness watches the connection itself.
func (c *Client) Stream(ctx context.Context, sessionID, lastEventID string, fn func(StreamEvent) error) error {
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/stream?general_session_id="+url.QueryEscape(sessionID), nil)
	if err != nil {
		return err
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return c.readStream(req, fn)
}

func (c *Client) readStream(req *http.Request, fn func(StreamEvent) error) error {
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return err
	}
	for ev, err := range sse.Read(resp.Body, &sse.ReadConfig{MaxEventSize: 16 << 20}) {
		if err != nil {
			return err
		}
		if err := fn(StreamEvent{ID: ev.LastEventID, Type: ev.Type, Data: json.RawMessage(ev.Data)}); err != nil {
			if errors.Is(err, ErrStopStream) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ErrStopStream, returned by a stream callback, ends the stream without error.
var ErrStopStream = errors.New("stop stream")

// PostToolResult calls POST /v1/tools/result.
func (c *Client) PostToolResult(ctx context.Context, sessionID string, r ToolResult) error {
	var out ToolResultResponse
	return c.Do(ctx, http.MethodPost, "/v1/tools/result", ToolResultRequest{GeneralSessionID: sessionID, ToolResult: r}, &out)
}

// Cancel calls POST /v1/chat/cancel.
func (c *Client) Cancel(ctx context.Context, sessionID string) (CancelResponse, error) {
	var out CancelResponse
	return out, c.Do(ctx, http.MethodPost, "/v1/chat/cancel", CancelRequest{GeneralSessionID: sessionID}, &out)
}
