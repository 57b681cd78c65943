package cliagent

import (
	"encoding/json"
	"errors"
	"jarvis/service/cliopts"
	"log/slog"
	"strings"
	"time"
)

// turn accumulates one Run's result from a CLI's stream and emits events.
// The per-CLI parsers translate their lines into calls on it. It is used
// from one goroutine at a time (os/exec's stdout copier, then Run).
type turn struct {
	emit func(Event)
	log  *slog.Logger

	text, thinking       strings.Builder
	textSep, thinkingSep bool // the next delta starts a new message

	resumeID string
	calls    []*toolRun
	byID     map[string]*toolRun
	usage    map[string]any

	// failed is set when the stream reported the turn failed; failMsg is
	// its message. errHint is a message seen in the stream that explains a
	// failure if the process then exits non-zero.
	failed           bool
	failMsg, errHint string

	// noise keeps the last stdout lines that were not JSON: a CLI's plain
	// messages (pi's "Session found in different project").
	noise []string
	// abort is closed (once) when the stream shows the turn cannot
	// succeed; authMsg says why.
	abort   chan struct{}
	authMsg string
}

const noiseKeep = 8

// status emits a progress line for the user.
func (t *turn) status(s string) {
	if s != "" {
		t.emit(Event{Status: s})
	}
}

// authFailed ends the turn now: retrying a refused login only delays the
// error.
func (t *turn) authFailed(msg string) {
	if t.authMsg != "" {
		return
	}
	t.authMsg = msg
	t.fail(msg)
	close(t.abort)
}

type toolRun struct {
	call    ToolCall
	started time.Time
	done    bool
}

func newTurn(emit func(Event), log *slog.Logger) *turn {
	return &turn{emit: emit, log: log, byID: map[string]*toolRun{}, abort: make(chan struct{})}
}

// newMessage marks a message boundary: the next text or thinking starts a
// new paragraph, so interim messages don't run into each other.
func (t *turn) newMessage() {
	t.textSep, t.thinkingSep = true, true
}

func (t *turn) textDelta(s string) {
	if s == "" {
		return
	}
	s = separate(&t.text, &t.textSep, s)
	t.text.WriteString(s)
	t.emit(Event{TextDelta: s})
}

func (t *turn) thinkingDelta(s string) {
	if s == "" {
		return
	}
	s = separate(&t.thinking, &t.thinkingSep, s)
	t.thinking.WriteString(s)
	t.emit(Event{ThinkingDelta: s})
}

// separate prefixes s with what it takes to start a new paragraph after
// the text so far, if a message boundary is pending.
func separate(sofar *strings.Builder, pending *bool, s string) string {
	if !*pending {
		return s
	}
	*pending = false
	if sofar.Len() == 0 {
		return s
	}
	prev := sofar.String()
	switch {
	case strings.HasSuffix(prev, "\n\n") || strings.HasPrefix(s, "\n\n"):
		return s
	case strings.HasSuffix(prev, "\n") || strings.HasPrefix(s, "\n"):
		return "\n" + s
	default:
		return "\n\n" + s
	}
}

// toolStart records a tool call; a repeated id is ignored (the CLIs may
// announce a call more than once as its input streams in).
func (t *turn) toolStart(id, name string, input json.RawMessage) {
	if id != "" {
		if _, ok := t.byID[id]; ok {
			return
		}
	}
	if name == "" {
		name = "unknown"
	}
	if len(input) == 0 || string(input) == "null" || !json.Valid(input) {
		input = nil
	}
	run := &toolRun{call: ToolCall{ID: id, Name: name, Input: input}, started: time.Now()}
	t.calls = append(t.calls, run)
	if id != "" {
		t.byID[id] = run
	}
	c := run.call
	t.emit(Event{ToolStarted: &c})
}

// toolEnd completes a tool call; one never announced is started first, so
// it still counts (with a zero duration).
func (t *turn) toolEnd(id, name string, isError bool) {
	run := t.byID[id]
	if run == nil || id == "" {
		t.toolStart(id, name, nil)
		run = t.calls[len(t.calls)-1]
	}
	if run.done {
		return
	}
	run.done = true
	run.call.DurationMs = time.Since(run.started).Milliseconds()
	run.call.IsError = isError
	c := run.call
	t.emit(Event{ToolFinished: &c})
}

func (t *turn) fail(msg string) {
	t.failed = true
	if msg != "" {
		t.failMsg = msg
	}
}

// finish builds the Result. Calls still open ran until the stream ended.
func (t *turn) finish() Result {
	res := Result{
		Text:     t.text.String(),
		Thinking: t.thinking.String(),
		ResumeID: t.resumeID,
		Usage:    t.usage,
	}
	for _, run := range t.calls {
		c := run.call
		if !run.done {
			c.DurationMs = time.Since(run.started).Milliseconds()
		}
		res.ToolCalls = append(res.ToolCalls, c)
	}
	return res
}

// addUsage sums src's numbers into dst, recursing into objects; other
// values are overwritten.
func addUsage(dst, src map[string]any) {
	for k, v := range src {
		switch v := v.(type) {
		case float64:
			if prev, ok := dst[k].(float64); ok {
				dst[k] = prev + v
			} else {
				dst[k] = v
			}
		case map[string]any:
			sub, ok := dst[k].(map[string]any)
			if !ok {
				sub = map[string]any{}
				dst[k] = sub
			}
			addUsage(sub, v)
		default:
			dst[k] = v
		}
	}
}

// rawString decodes a JSON string, or returns "" for anything else.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// decode parses one stream line into v, logging and rejecting lines that
// are not JSON objects (banners, warnings, garbage).
func (t *turn) decode(b []byte, v any) bool {
	if len(b) == 0 || b[0] != '{' {
		t.log.Debug("cliagent: ignoring non-JSON line", "bytes", len(b))
		if line := strings.TrimSpace(cliopts.ANSIEscape.ReplaceAllString(string(b), "")); line != "" {
			t.noise = append(t.noise, line)
			if len(t.noise) > noiseKeep {
				t.noise = t.noise[1:]
			}
		}
		return false
	}
	if err := decodeLenient(b, v); err != nil {
		t.log.Debug("cliagent: ignoring malformed line", "bytes", len(b), "err", err)
		return false
	}
	return true
}

// decodeLenient is json.Unmarshal that accepts fields of an unexpected
// type: Unmarshal skips them and fills in the rest, which is what a parser
// of a format that changes between releases wants.
func decodeLenient(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}
