package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"jarvis/service/textclean"
)

// Response is one decoded answer from an external agent.
type Response struct {
	MessageID string
	// Output is the text to show. For a partial response it is this
	// message's part; for a final one it is the whole turn's answer
	// (sessionInfo.output, or the stitched parts).
	Output string
	// Parts are the output items behind Output, including non-text ones
	// (image, file, audio) that Output leaves out.
	Parts []Part
	// Thoughts are the debug[] contents, kept for the transcript.
	Thoughts []string
	// Status is sessionInfo.status (idle, busy, error): the agent's status.
	Status            string
	ConversationState string
	// Final is set when this response completes the turn: always for a
	// synchronous answer; for callbacks and stream events when it carries
	// sessionInfo.output or conversationState COMPLETED or ERROR.
	Final bool
	// Pending is set by Call for an async definition: the agent acknowledged
	// the request and will POST its answer to the callback URL.
	Pending bool
	// Raw is the JSON the response was decoded from (for a stream, the last
	// event); empty when the agent sent no body.
	Raw json.RawMessage
	// Sanitized counts what was removed from the text: bytes that were not
	// UTF-8 (JSON decoding turns them into U+FFFD, which is dropped) and NUL
	// characters. For a stitched answer it is the sum over the turn.
	Sanitized Sanitized

	whole bool // Output came from the final-output location
}

// Sanitized says what cleaning an agent's text removed.
type Sanitized struct {
	InvalidUTF8Bytes int `json:"invalidUtf8Bytes,omitempty"`
	NULBytes         int `json:"nulBytes,omitempty"`
}

// Changed reports whether anything was removed.
func (s Sanitized) Changed() bool { return s.InvalidUTF8Bytes+s.NULBytes > 0 }

func (s *Sanitized) add(o Sanitized) {
	s.InvalidUTF8Bytes += o.InvalidUTF8Bytes
	s.NULBytes += o.NULBytes
}

// Chunk is one streamed message, delivered as it arrives. Text is only this
// message's part (never the stitched whole), so appending the Texts gives
// the stream so far; the final answer is what Call returns.
type Chunk struct {
	Seq      int // 0, 1, 2… in arrival order
	Text     string
	Thoughts []string
	Status   string
	Final    bool
}

// ParseCallback decodes a response an async agent POSTed to the callback
// URL. Feed the results of one turn to a Turn to know when it is complete
// and to get the stitched answer. Errors match ErrInvalid (bad mapping) or
// ErrMalformed.
func ParseCallback(body []byte, m Mapping) (Response, error) {
	cm, errs := m.compile()
	if len(errs) > 0 {
		return Response{}, errors.Join(errs...)
	}
	d, err := decode(body, cm)
	if err != nil {
		return Response{}, err
	}
	return d.response(), nil
}

// Turn stitches the responses of one turn (callbacks or stream events) into
// the final answer. It is safe for concurrent use, since an agent may POST
// several callbacks at once.
//
// The turn is complete at the first Final response. Its Output is then
// sessionInfo.output if the agent sent it, else the concatenation of every
// part received (parts are pieces of one answer, so nothing is inserted
// between them); its Thoughts are all thoughts received. The zero value is
// an empty turn, ready to use; use one Turn per turn.
type Turn struct {
	mu       sync.Mutex
	text     strings.Builder
	parts    []Part
	thoughts []string
	last     Response // for Finish: the latest message id, status and raw JSON
	cleaned  Sanitized
	done     bool
}

// Add records r and returns what to show: r itself while the turn goes on,
// the stitched answer when r completes it. After completion it returns
// ErrTurnClosed (a late or repeated callback).
func (t *Turn) Add(r Response) (Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return Response{}, ErrTurnClosed
	}
	t.thoughts = append(t.thoughts, r.Thoughts...)
	t.cleaned.add(r.Sanitized)
	if !r.whole {
		t.text.WriteString(r.Output)
		t.parts = append(t.parts, r.Parts...)
	}
	t.last = r
	if !r.Final {
		return r, nil
	}
	return t.finishLocked(r), nil
}

// Finish completes the turn with what has arrived so far, for a stream that
// ended without a final message. It returns ErrTurnClosed if the turn was
// already complete.
func (t *Turn) Finish() (Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return Response{}, ErrTurnClosed
	}
	last := t.last
	last.whole = false
	return t.finishLocked(last), nil
}

func (t *Turn) finishLocked(last Response) Response {
	t.done = true
	last.Final = true
	if !last.whole {
		last.Output, last.Parts = t.text.String(), append([]Part(nil), t.parts...)
	}
	last.Thoughts = append([]string(nil), t.thoughts...)
	last.Sanitized = t.cleaned
	return last
}

// Done reports whether the turn is complete.
func (t *Turn) Done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// compiledMapping holds the paths of a Mapping, defaults filled in.
type compiledMapping struct {
	messageID, output, thoughts, status, state, final path
	exprs                                             [6]string // as configured or defaulted, for messages
}

// The Agent Protocol locations, used for empty Mapping fields.
const (
	defMessageID = "messageId"
	defOutput    = "output"
	defThoughts  = "debug"
	defStatus    = "sessionInfo.status"
	defState     = "sessionInfo.conversationState"
	defFinal     = "sessionInfo.output"
)

func (m Mapping) compile() (compiledMapping, []error) {
	var cm compiledMapping
	var errs []error
	fields := []struct {
		name, expr, def string
		dst             *path
	}{
		{"responseMapping.messageId", m.MessageID, defMessageID, &cm.messageID},
		{"responseMapping.output", m.Output, defOutput, &cm.output},
		{"responseMapping.thoughts", m.Thoughts, defThoughts, &cm.thoughts},
		{"responseMapping.status", m.Status, defStatus, &cm.status},
		{"responseMapping.conversationState", m.ConversationState, defState, &cm.state},
		{"responseMapping.finalOutput", m.FinalOutput, defFinal, &cm.final},
	}
	for i, f := range fields {
		expr := strings.TrimSpace(f.expr)
		if expr == "" {
			expr = f.def
		}
		p, err := parsePath(expr)
		if err != nil {
			errs = append(errs, &ValidationError{Field: f.name, Problem: "path " + quote(expr) + ": " + err.Error()})
			continue
		}
		*f.dst = p
		cm.exprs[i] = expr
	}
	return cm, errs
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// decoded is one message as found through a mapping.
type decoded struct {
	messageID  string
	parts      []Part // output items
	wholeParts []Part // final-output items
	hasWhole   bool
	thoughts   []string
	status     string
	state      string
	raw        []byte
	cleaned    Sanitized
}

func (d decoded) final() bool {
	if d.hasWhole {
		return true
	}
	switch strings.ToUpper(d.state) {
	case StateCompleted, StateError:
		return true
	}
	return false
}

func (d decoded) response() Response {
	r := Response{
		MessageID:         d.messageID,
		Output:            textOf(d.parts),
		Parts:             d.parts,
		Thoughts:          d.thoughts,
		Status:            d.status,
		ConversationState: d.state,
		Final:             d.final(),
		Raw:               json.RawMessage(d.raw),
		Sanitized:         d.cleaned,
	}
	if d.hasWhole {
		r.Output, r.Parts, r.whole = textOf(d.wholeParts), d.wholeParts, true
	}
	return r
}

func (d decoded) chunk(seq int) Chunk {
	return Chunk{Seq: seq, Text: textOf(d.parts), Thoughts: d.thoughts, Status: d.status, Final: d.final()}
}

// decode reads one JSON message through m. The message must be a JSON
// object or array in which the mapping finds at least one of its fields;
// anything else is a *MalformedError. raw keeps a copy of body.
func decode(body []byte, m compiledMapping) (decoded, error) {
	// Raw NULs (invalid inside a JSON string) are removed and counted, as
	// escaped ones are below (textclean: the same way everywhere).
	b, nuls := textclean.StripNUL(bytes.TrimSpace(body))
	if len(b) == 0 {
		return decoded{}, &MalformedError{Reason: "empty body where a JSON response was expected"}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return decoded{}, &MalformedError{Reason: "invalid JSON", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return decoded{}, &MalformedError{Reason: "unexpected data after the JSON value"}
	}
	switch v.(type) {
	case map[string]any, []any:
	default:
		return decoded{}, &MalformedError{Reason: "expected a JSON object, got " + excerpt(b, 64)}
	}
	d := decoded{raw: append([]byte(nil), b...)}
	d.cleaned.NULBytes = nuls
	// Agents' text goes to the window and the database: bytes that are not
	// UTF-8 (decoded as U+FFFD) and NULs (escaped as \u0000) are dropped
	// and counted, as for external agents' callbacks.
	if !utf8.Valid(b) {
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				d.cleaned.InvalidUTF8Bytes++
			}
			i += n
		}
	}
	v = scrubStrings(v, d.cleaned.InvalidUTF8Bytes > 0, &d.cleaned)
	if r := m.messageID.eval(v); len(r) > 0 {
		d.messageID = scalarText(r[0])
	}
	d.parts = collectParts(nil, m.output.eval(v))
	for _, p := range collectParts(nil, m.thoughts.eval(v)) {
		if p.Content != "" {
			d.thoughts = append(d.thoughts, p.Content)
		}
	}
	if r := m.status.eval(v); len(r) > 0 {
		d.status = scalarText(r[0])
	}
	if r := m.state.eval(v); len(r) > 0 {
		d.state = scalarText(r[0])
	}
	if r := m.final.eval(v); len(r) > 0 {
		d.wholeParts = collectParts(nil, r)
		d.hasWhole = len(d.wholeParts) > 0
	}
	if d.messageID == "" && len(d.parts) == 0 && len(d.thoughts) == 0 && d.status == "" && d.state == "" && !d.hasWhole {
		return decoded{}, &MalformedError{Reason: "none of the mapped fields was found (output at " + quote(m.exprs[1]) +
			", status at " + quote(m.exprs[3]) + "); set responseMapping for a non-conforming agent"}
	}
	return d, nil
}

// collectParts flattens values found by a path into parts: a string is a
// text part, an object contributes its type and its content (or text)
// field, an array is flattened, a number or boolean is text; null and
// objects without content are skipped.
func collectParts(dst []Part, vals []any) []Part {
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
		case []any:
			dst = collectParts(dst, x)
		case map[string]any:
			c, ok := x["content"]
			if !ok {
				c, ok = x["text"]
			}
			if !ok {
				continue
			}
			typ, _ := x["type"].(string)
			if typ == "" {
				typ = "text"
			}
			dst = append(dst, Part{Type: typ, Content: scalarText(c)})
		default:
			dst = append(dst, Part{Type: "text", Content: scalarText(x)})
		}
	}
	return dst
}

// textOf joins the text parts of one message. Separate items of one message
// are separate paragraphs.
func textOf(parts []Part) string {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Content)
		}
	}
	return strings.Join(texts, "\n\n")
}

// scrubStrings removes NULs from every string of a decoded JSON value, and
// U+FFFD too when the body had invalid UTF-8 (that is what JSON decoding
// made of it), counting the NULs.
func scrubStrings(v any, dropFFFD bool, c *Sanitized) any {
	clean := func(s string) string {
		if n := strings.Count(s, "\x00"); n > 0 {
			c.NULBytes += n
			s = strings.ReplaceAll(s, "\x00", "")
		}
		if dropFFFD {
			s = strings.ReplaceAll(s, "\uFFFD", "")
		}
		return s
	}
	switch x := v.(type) {
	case string:
		return clean(x)
	case []any:
		for i := range x {
			x[i] = scrubStrings(x[i], dropFFFD, c)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = scrubStrings(e, dropFFFD, c)
		}
	}
	return v
}
