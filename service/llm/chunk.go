package llm

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// streamChunk is what the chat loop reads of a chat.completion.chunk: the
// text, the tool calls and the finish reason of each choice. go-openai
// frames the stream (RecvRaw); decoding only these fields, instead of its
// whole response type, is most of the service's work per delta.
type streamChunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
}

// chunkUsage is the usage a server reports, in the last chunk.
type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type chunkChoice struct {
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type chunkDelta struct {
	Content   string          `json:"content"`
	ToolCalls []chunkToolCall `json:"tool_calls"`
}

type chunkToolCall struct {
	Index    *int          `json:"index"`
	ID       string        `json:"id"`
	Function chunkFunction `json:"function"`
}

type chunkFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// decodeChunk decodes one chunk as encoding/json would decode it into a
// streamChunk. The common shape is read by a small scanner that validates
// the whole text and gives up on anything it does not handle exactly as
// encoding/json does (duplicate or case-folded keys, numbers that are not
// plain integers, nesting deeper than maxChunkDepth); encoding/json decodes
// those, and reports the errors.
func decodeChunk(raw []byte) (streamChunk, error) {
	d := chunkScanner{b: raw}
	if c, ok := d.chunk(); ok {
		return c, nil
	}
	var c streamChunk
	err := json.Unmarshal(raw, &c)
	return c, err
}

const maxChunkDepth = 64

type chunkScanner struct {
	b []byte
	i int
}

func (d *chunkScanner) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips white space and reports whether the next byte is c, consuming it.
func (d *chunkScanner) next(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *chunkScanner) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *chunkScanner) chunk() (c streamChunk, ok bool) {
	ok = d.object(0, func(field int) bool {
		if field == 0 {
			return list(d, &c.Choices, d.choice)
		}
		return d.usage(&c.Usage)
	}, "choices", "usage")
	d.ws()
	return c, ok && d.i == len(d.b)
}

// usage reads the usage object, or null (u stays nil).
func (d *chunkScanner) usage(u **chunkUsage) bool {
	if d.literal("null") {
		return true
	}
	*u = &chunkUsage{}
	return d.object(0, func(field int) bool {
		n, ok := d.integer()
		if field == 0 {
			(*u).PromptTokens = n
		} else {
			(*u).CompletionTokens = n
		}
		return ok
	}, "prompt_tokens", "completion_tokens")
}

func (d *chunkScanner) choice(ch *chunkChoice) bool {
	return d.object(0, func(field int) bool {
		if field == 0 {
			return d.literal("null") || d.delta(&ch.Delta)
		}
		return d.stringOrNull(&ch.FinishReason)
	}, "delta", "finish_reason")
}

func (d *chunkScanner) delta(dl *chunkDelta) bool {
	return d.object(0, func(field int) bool {
		if field == 0 {
			return d.stringOrNull(&dl.Content)
		}
		return list(d, &dl.ToolCalls, d.toolCall)
	}, "content", "tool_calls")
}

func (d *chunkScanner) toolCall(tc *chunkToolCall) bool {
	return d.object(0, func(field int) bool {
		switch field {
		case 0:
			if d.literal("null") {
				return true
			}
			n, ok := d.integer()
			tc.Index = &n
			return ok
		case 1:
			return d.stringOrNull(&tc.ID)
		default:
			return d.literal("null") || d.object(0, func(field int) bool {
				if field == 0 {
					return d.stringOrNull(&tc.Function.Name)
				}
				return d.stringOrNull(&tc.Function.Arguments)
			}, "name", "arguments")
		}
	}, "index", "id", "function")
}

// object reads an object whose fields named in keys are read by field,
// given the name's index in keys (at most once each: encoding/json would
// merge repeats); any other field is validated and skipped, unless its name
// could match one of keys without case (encoding/json matches names that
// way). depth is the object's depth among the values skip reads (0 for the
// ones the scanner reads by name).
func (d *chunkScanner) object(depth int, field func(int) bool, keys ...string) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	var seen uint
	for {
		key, ok := d.key()
		if !ok || !d.next(':') {
			return false
		}
		known := -1
		for i, k := range keys {
			if string(key) == k {
				known = i
			} else if foldable(key, k) {
				return false
			}
		}
		if known >= 0 {
			if seen&(1<<known) != 0 || !field(known) {
				return false
			}
			seen |= 1 << known
		} else if !d.skip(depth + 1) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// foldable reports whether encoding/json might take key for k: equal
// without case, or not ASCII (its case folding knows a few non-ASCII
// letters).
func foldable(key []byte, k string) bool {
	if len(key) != len(k) {
		for i := 0; i < len(key); i++ {
			if key[i] >= utf8.RuneSelf {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(key); i++ {
		a, b := key[i], k[i]
		if a >= utf8.RuneSelf {
			return true
		}
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// list reads an array of elements read by elem into *s, or null (s stays
// nil; an empty array leaves it empty, not nil, as encoding/json does).
func list[T any](d *chunkScanner, s *[]T, elem func(*T) bool) bool {
	if d.literal("null") {
		return true
	}
	*s = []T{}
	return d.array(func() bool {
		var zero T
		*s = append(*s, zero) // read in place: a local would escape through elem
		return elem(&(*s)[len(*s)-1])
	})
}

func (d *chunkScanner) array(elem func() bool) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

func (d *chunkScanner) literal(lit string) bool {
	d.ws()
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

func (d *chunkScanner) stringOrNull(s *string) bool {
	if d.literal("null") {
		return true
	}
	v, ok := d.str()
	*s = v
	return ok
}

// token reads a string token, quotes included, and reports whether it has
// no escape.
func (d *chunkScanner) token() (tok []byte, plain, ok bool) {
	if !d.next('"') {
		return nil, false, false
	}
	start := d.i - 1
	plain = true
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start:d.i], plain, true
		case c == '\\':
			plain = false
			d.i++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// str reads a string. Text with no escape that is valid UTF-8 is taken as
// it is; any other is handed to encoding/json (its escapes, and its
// replacement of invalid UTF-8).
func (d *chunkScanner) str() (string, bool) {
	tok, plain, ok := d.token()
	if !ok {
		return "", false
	}
	if text := tok[1 : len(tok)-1]; plain && utf8.Valid(text) {
		return string(text), true
	}
	var s string
	err := json.Unmarshal(tok, &s)
	return s, err == nil
}

// key reads a field name, without copying it when it has no escape.
func (d *chunkScanner) key() ([]byte, bool) {
	tok, plain, ok := d.token()
	if !ok {
		return nil, false
	}
	if plain {
		return tok[1 : len(tok)-1], true
	}
	var s string
	err := json.Unmarshal(tok, &s)
	return []byte(s), err == nil
}

// integer reads a number that encoding/json stores in an int: a JSON number
// that Atoi takes (no fraction or exponent, in range).
func (d *chunkScanner) integer() (int, bool) {
	d.ws()
	start := d.i
	if !d.number() {
		return 0, false
	}
	n, err := strconv.Atoi(string(d.b[start:d.i]))
	return n, err == nil
}

// skip validates and skips one value of any type.
func (d *chunkScanner) skip(depth int) bool {
	if depth > maxChunkDepth {
		return false
	}
	switch d.peek() {
	case '{':
		return d.object(depth, nil) // no names to read: every member is skipped
	case '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case '"':
		tok, plain, ok := d.token()
		return ok && (plain || json.Valid(tok))
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return d.number()
}

// number skips a JSON number.
func (d *chunkScanner) number() bool {
	d.ws()
	digits := func() int {
		n := 0
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	first := d.i
	if n := digits(); n == 0 || (n > 1 && d.b[first] == '0') {
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
