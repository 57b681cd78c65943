package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A bodyTemplate is a compiled request-body template: JSON text with
// {{placeholders}} for agents that expect another shape than the Agent
// Protocol request. The template is scanned once, tracking whether each
// placeholder stands inside a JSON string, so that rendering always escapes
// correctly:
//
//   - a placeholder that is a whole string literal ("{{metadata.count}}")
//     is replaced, quotes included, by the value's JSON encoding, so that
//     numbers, booleans and objects keep their type (strings stay strings);
//   - a placeholder inside a longer string ("Hello {{userId}}!") or inside
//     an object key is replaced by the value's text, JSON-string-escaped;
//   - a placeholder outside any string ({"n": {{metadata.count}}}) — possible
//     only when the body is given as a JSON string holding the template
//     text — is replaced by the value's JSON encoding.
//
// A missing metadata key renders as null (or as nothing inside a string).
// Every "{{" opens a placeholder; the template language has no escape.
type bodyTemplate struct {
	segs []segment
	tail string
}

type segment struct {
	lit   string // literal text before the placeholder
	name  string // placeholder name as written, for messages
	val   valueKind
	meta  path // for valMetaPath
	inStr bool // render as escaped text inside a JSON string
}

type valueKind int

const (
	valInput valueKind = iota
	valSessionID
	valUserID
	valCallbackURL
	valDebug
	valStream
	valMetadata
	valMetaPath
)

// placeholderNames lists the names a body template may use, for messages.
const placeholderNames = "input, sessionId, userId, callbackUrl, debug, stream, metadata, metadata.<key>"

// templateVars are the values a template is rendered with.
type templateVars struct {
	Input       string
	SessionID   string
	UserID      string
	CallbackURL string
	Debug       bool
	Stream      bool
	Metadata    map[string]any
}

func compileTemplate(src string) (*bodyTemplate, error) {
	t := &bodyTemplate{}
	inStr, esc := false, false
	strStart := -1
	litStart := 0
	for i := 0; i < len(src); {
		c := src[i]
		if inStr && esc {
			esc = false
			i++
			continue
		}
		if c == '{' && i+1 < len(src) && src[i+1] == '{' {
			end := strings.Index(src[i+2:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("unclosed {{ at offset %d", i)
			}
			name := strings.TrimSpace(src[i+2 : i+2+end])
			seg, err := placeholder(name)
			if err != nil {
				return nil, fmt.Errorf("placeholder at offset %d: %w", i, err)
			}
			after := i + 2 + end + 2
			litEnd := i
			if inStr {
				seg.inStr = true
				if strStart == i-1 && after < len(src) && src[after] == '"' && !nextIsColon(src, after+1) {
					// The placeholder is the whole string literal: drop
					// its quotes and emit a typed JSON value.
					seg.inStr = false
					litEnd = i - 1
					after++
					inStr = false
				}
			}
			seg.lit = src[litStart:litEnd]
			t.segs = append(t.segs, seg)
			litStart, i = after, after
			continue
		}
		switch {
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case !inStr && c == '"':
			inStr, strStart = true, i
		}
		i++
	}
	t.tail = src[litStart:]
	return t, nil
}

// nextIsColon reports whether the next non-space byte from i is ':', i.e.
// the string just closed is an object key.
func nextIsColon(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

func placeholder(name string) (segment, error) {
	seg := segment{name: name}
	switch name {
	case "input":
		seg.val = valInput
	case "sessionId":
		seg.val = valSessionID
	case "userId":
		seg.val = valUserID
	case "callbackUrl":
		seg.val = valCallbackURL
	case "debug":
		seg.val = valDebug
	case "stream":
		seg.val = valStream
	case "metadata":
		seg.val = valMetadata
	default:
		if strings.HasPrefix(name, "secret:") {
			return seg, fmt.Errorf("{{%s}}: secrets may only be used in header values, never in the body", name)
		}
		rest, ok := strings.CutPrefix(name, "metadata.")
		if !ok {
			return seg, fmt.Errorf("unknown placeholder {{%s}} (known: %s)", name, placeholderNames)
		}
		p, err := parsePath(rest)
		if err != nil || len(p) == 0 {
			if err == nil {
				err = fmt.Errorf("empty key")
			}
			return seg, fmt.Errorf("{{%s}}: %w", name, err)
		}
		seg.val, seg.meta = valMetaPath, p
	}
	return seg, nil
}

func (t *bodyTemplate) render(v templateVars) ([]byte, error) {
	var buf bytes.Buffer
	for _, s := range t.segs {
		buf.WriteString(s.lit)
		var x any
		switch s.val {
		case valInput:
			x = v.Input
		case valSessionID:
			x = v.SessionID
		case valUserID:
			x = v.UserID
		case valCallbackURL:
			x = v.CallbackURL
		case valDebug:
			x = v.Debug
		case valStream:
			x = v.Stream
		case valMetadata:
			x = v.Metadata
			if v.Metadata == nil {
				x = map[string]any{}
			}
		case valMetaPath:
			if r := s.meta.eval(v.Metadata); len(r) > 0 {
				x = r[0]
			}
		}
		if s.inStr {
			if x == nil {
				continue
			}
			str, ok := x.(string)
			if !ok {
				b, err := marshalJSON(x)
				if err != nil {
					return nil, fmt.Errorf("{{%s}}: %w", s.name, err)
				}
				str = string(b)
			}
			b, _ := marshalJSON(str) // a string always encodes
			buf.Write(b[1 : len(b)-1])
			continue
		}
		b, err := marshalJSON(x)
		if err != nil {
			return nil, fmt.Errorf("{{%s}}: %w", s.name, err)
		}
		buf.Write(b)
	}
	buf.WriteString(t.tail)
	return buf.Bytes(), nil
}

// marshalJSON encodes v without HTML escaping (bodies go to agents, not
// browsers) and without the encoder's trailing newline.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
