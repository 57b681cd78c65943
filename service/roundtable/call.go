package roundtable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"jarvis/service/textclean"
)

// callFailure is why one call produced nothing usable.
type callFailure struct {
	kind      ExclusionKind
	reason    string
	status    int
	unhealthy bool // exclude the agent from the remaining phases too
}

// caller performs the HTTP side of one agent call. It is shared by the
// engine and the conformance checker.
type caller struct {
	client  *http.Client
	timeout time.Duration
	maxBody int64
}

// callResult is a 2xx answer.
type callResult struct {
	body        []byte // without NUL bytes (stripNUL)
	nulBytes    int    // NUL bytes removed from the body
	status      int
	contentType string
	latency     time.Duration
}

// post sends body to baseURL+path and returns the raw response body of a
// 2xx answer. On failure the result still carries status and latency.
func (c caller) post(ctx context.Context, baseURL, apiKey, path string, body any) (callResult, *callFailure) {
	payload, err := json.Marshal(body)
	if err != nil {
		// Our own request types always marshal; anything else is a bug.
		return callResult{}, &callFailure{kind: ExcludedTransport, reason: "encoding request: " + err.Error()}
	}
	return c.postRaw(ctx, baseURL, apiKey, path, payload)
}

// postRaw is post with a body already encoded, so that a request sent to
// every agent is marshalled once.
func (c caller) postRaw(ctx context.Context, baseURL, apiKey, path string, payload []byte) (res callResult, fail *callFailure) {
	start := time.Now()
	defer func() { res.latency = time.Since(start) }()
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, strings.TrimRight(baseURL, "/")+path, bytes.NewReader(payload))
	if err != nil {
		return res, &callFailure{kind: ExcludedInvalidAgent, reason: "building request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "jarvis-roundtable/1")
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return res, c.classify(ctx, err, "request")
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	res.contentType = resp.Header.Get("Content-Type")

	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return res, &callFailure{kind: ExcludedRedirect, status: resp.StatusCode,
			reason: fmt.Sprintf("HTTP %d redirect to %q refused: redirects are never followed",
				resp.StatusCode, truncateForMessage(resp.Header.Get("Location"), 200))}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		// A short, sanitised excerpt helps the agent's author; the rest is
		// not read.
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if s := strings.Join(strings.Fields(strings.ToValidUTF8(stripControls(string(snippet)), "\uFFFD")), " "); s != "" {
			msg += ": " + truncateForMessage(s, 200)
		}
		return res, &callFailure{kind: ExcludedHTTPError, status: resp.StatusCode, reason: msg}
	}

	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return res, c.classify(ctx, err, "reading response")
	}
	if int64(len(data)) > c.maxBody {
		return res, &callFailure{kind: ExcludedBodyTooLarge, status: resp.StatusCode,
			reason: fmt.Sprintf("response body exceeds the %s limit; reading stopped at %d bytes", formatBytes(c.maxBody), c.maxBody)}
	}
	// NULs are removed and counted, the same way everywhere (textclean):
	// a NUL inside a JSON string would make the whole answer invalid JSON.
	res.body, res.nulBytes = textclean.StripNUL(data)
	return res, nil
}

// classify turns a transport error into a failure. The caller's own
// cancellation is not the agent's fault and is reported as such.
func (c caller) classify(parent context.Context, err error, during string) *callFailure {
	var ne net.Error
	switch {
	case parent.Err() != nil:
		return &callFailure{kind: ExcludedCancelled, reason: "deliberation cancelled: " + parent.Err().Error()}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &callFailure{kind: ExcludedTimeout, unhealthy: true,
			reason: fmt.Sprintf("no complete answer within %s (%s); agent marked unhealthy", c.timeout, during)}
	case errors.Is(err, ErrBlockedAddress):
		return &callFailure{kind: ExcludedBlockedAddress, unhealthy: true,
			reason: "refused to connect: " + scrubURLError(err)}
	}
	return &callFailure{kind: ExcludedTransport, reason: during + " failed: " + scrubURLError(err)}
}

// scrubURLError keeps the cause of a *url.Error without repeating the URL,
// which the exclusion already identifies by agent.
func scrubURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		if isStrippedControl(r) {
			return -1
		}
		return r
	}, s)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
