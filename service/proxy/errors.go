package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors. The HTTP edge and the session runtime map them with
// errors.Is; the concrete errors below carry the details and match their
// sentinel.
var (
	// ErrInvalid wraps every *ValidationError: the definition cannot be used.
	ErrInvalid = errors.New("proxy: invalid agent definition")
	// ErrTimeout: the agent did not answer (or finish its stream) within the
	// definition's timeout.
	ErrTimeout = errors.New("proxy: external agent timed out")
	// ErrUnreachable: no connection could be made, or it broke mid-answer.
	ErrUnreachable = errors.New("proxy: external agent unreachable")
	// ErrMalformed: the answer is not valid JSON, or not a response the
	// definition's mapping recognises. Always a *MalformedError.
	ErrMalformed = errors.New("proxy: malformed response from external agent")
	// ErrTooLarge: the answer exceeded the response size cap. Always a
	// *TooLargeError.
	ErrTooLarge = errors.New("proxy: external agent response too large")
	// ErrRedirect: the agent answered 3xx. Redirects are never followed, so
	// that a definition cannot be bounced to another host with its secret
	// headers. Always a *RedirectError.
	ErrRedirect = errors.New("proxy: external agent redirected")
	// ErrSecret: a {{secret:name}} header reference could not be resolved.
	ErrSecret = errors.New("proxy: secret unavailable")
	// ErrTurnClosed is returned by Turn.Add for a response arriving after
	// the turn's final one.
	ErrTurnClosed = errors.New("proxy: turn already complete")
)

// excerptLimit caps the body excerpt an *ErrStatus carries, so that an
// error page never floods logs or the transcript.
const excerptLimit = 512

// ErrStatus is returned when the agent answers 4xx or 5xx (or any other
// non-2xx, non-3xx status). Body is an excerpt of at most 512 bytes, cut at
// a rune boundary.
type ErrStatus struct {
	Code int
	Body string
}

func (e *ErrStatus) Error() string {
	msg := fmt.Sprintf("proxy: external agent answered %d %s", e.Code, http.StatusText(e.Code))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// RedirectError is returned for a 3xx answer; it names the target that was
// not followed.
type RedirectError struct {
	Code     int
	Location string
}

func (e *RedirectError) Error() string {
	loc := e.Location
	if loc == "" {
		loc = "(no Location header)"
	}
	return fmt.Sprintf("proxy: external agent answered %d redirecting to %s; redirects are not followed, put the final URL in the definition", e.Code, loc)
}

func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// TooLargeError is returned when reading stopped at the size cap.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("proxy: external agent response exceeds the %d-byte cap; reading stopped (raise maxResponseBytes if this is expected)", e.Limit)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// MalformedError says why a response could not be decoded.
type MalformedError struct {
	Reason string
	Err    error // the underlying decoder error, if any
}

func (e *MalformedError) Error() string {
	if e.Err != nil {
		return "proxy: malformed response from external agent: " + e.Reason + ": " + e.Err.Error()
	}
	return "proxy: malformed response from external agent: " + e.Reason
}

func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }
func (e *MalformedError) Unwrap() error        { return e.Err }

// ValidationError names one field of a Definition and what is wrong with it.
// Validate joins several with errors.Join.
type ValidationError struct {
	Field   string // JSON name, e.g. "responseMapping.output"
	Problem string
}

func (e *ValidationError) Error() string {
	return "proxy definition: " + e.Field + ": " + e.Problem
}

func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// excerpt returns at most excerptLimit bytes of b, cut at a rune boundary,
// with surrounding whitespace removed.
func excerpt(b []byte, limit int) string {
	s := strings.TrimSpace(string(b))
	if len(s) <= limit {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "\uFFFD") + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
