package proxy

import (
	"context"
	"errors"
)

// testRawLimit caps TestReport.RawResponse.
const testRawLimit = 16 << 10

// TestReport is what the proxy-agent editor's Test button shows (docs/protocols/proxy-agents.md:
// "The response from the API is displayed here when the Test is initiated
// with sample values").
type TestReport struct {
	// Status is the HTTP status of the answer; 0 if none arrived.
	Status      int    `json:"status"`
	LatencyMs   int64  `json:"latencyMs"`
	ContentType string `json:"contentType,omitempty"`
	// RequestBody is the body that was sent (headers are not shown: they
	// may hold secrets).
	RequestBody string `json:"requestBody,omitempty"`
	// RawResponse is the answer as received, capped at 16 KiB.
	RawResponse  string `json:"rawResponse"`
	RawTruncated bool   `json:"rawTruncated,omitempty"`
	// Parsed is set when the answer was understood (for an async agent,
	// when it was acknowledged).
	Parsed bool `json:"parsed"`
	// ParseError says why a received answer could not be understood.
	ParseError string `json:"parseError,omitempty"`
	// Error is any failure, including a ParseError; ErrorKind classifies
	// it (see Kind).
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"errorKind,omitempty"`
	// Output, Thoughts and AgentStatus are what a user would see.
	Output      string   `json:"output"`
	Thoughts    []string `json:"thoughts,omitempty"`
	AgentStatus string   `json:"agentStatus,omitempty"`
	// Chunks counts streamed messages; Pending marks an async agent that
	// acknowledged and will answer at the callback URL.
	Chunks  int  `json:"chunks,omitempty"`
	Pending bool `json:"pending,omitempty"`
}

// Test sends sample to the agent as Call would and reports everything the
// editor shows. It never returns an error: failures are in the report. The
// outcome is recorded in the health tracker like any call.
func (c *Client) Test(ctx context.Context, def Definition, sample Input) TestReport {
	rec := &recorder{raw: limitedBuffer{max: testRawLimit}}
	var rep TestReport
	start := c.now()
	resp, err := c.call(ctx, def, sample, func(Chunk) { rep.Chunks++ }, rec)
	rep.LatencyMs = c.now().Sub(start).Milliseconds()
	rep.Status, rep.ContentType = rec.status, rec.contentType
	rep.RequestBody = string(rec.requestBody)
	rep.RawResponse, rep.RawTruncated = rec.raw.buf.String(), rec.raw.truncated
	if err != nil {
		rep.Error, rep.ErrorKind = err.Error(), Kind(err)
		if errors.Is(err, ErrMalformed) {
			rep.ParseError = err.Error()
		}
		return rep
	}
	rep.Parsed = true
	rep.Output, rep.Thoughts, rep.AgentStatus, rep.Pending = resp.Output, resp.Thoughts, resp.Status, resp.Pending
	return rep
}

// Kind names the class of a Call error for events, logs and the error
// envelope: "invalid", "secret", "timeout", "unreachable", "redirect",
// "too_large", "malformed", "status", "cancelled", or "" for nil and
// unknown errors.
func Kind(err error) string {
	var se *ErrStatus
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrInvalid):
		return "invalid"
	case errors.Is(err, ErrSecret):
		return "secret"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrUnreachable):
		return "unreachable"
	case errors.Is(err, ErrRedirect):
		return "redirect"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.As(err, &se):
		return "status"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return ""
}
