package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"net/http"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// A chat request's system message and tool schemas are most of its body
// (here about 9 KB of 9.2 for a first message) and the same from one
// request to the next, yet go-openai encodes them anew every time, slowly:
// Tool.MarshalJSON goes through a map, and encoding/json validates and
// compacts the output of every MarshalJSON again (the message's, the
// tool's, the schema's). That was about 180 µs of a request, more than
// everything else the service adds to a turn before it calls the model.
// So each distinct pair of them is encoded once, exactly as go-openai
// encodes it, and the provider's HTTP client (staticDoer) puts them into
// the body go-openai built from the rest of the request.

// staticParts is the encoded system message and tools of a request.
type staticParts struct {
	system string
	tools  []ToolSpec
	// systemJSON is the system message as an element of "messages";
	// toolsJSON is the value of "tools". Either is nil when absent.
	systemJSON, toolsJSON []byte
}

// staticCache holds the encoded parts, keyed by a hash of their content and
// checked against it: content decides, so nothing needs invalidating. A
// service has a few (one per agent and configuration); past maxStatic the
// cache starts over.
type staticCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	parts map[uint64][]*staticParts
	n     int
}

const maxStatic = 64

var statics = staticCache{seed: maphash.MakeSeed(), parts: map[uint64][]*staticParts{}}

// encode returns the encoded parts of system and specs.
func (c *staticCache) encode(system string, specs []ToolSpec) (*staticParts, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(system)
	for _, t := range specs {
		h.WriteByte(0)
		h.WriteString(t.Name)
		h.WriteByte(0)
		h.WriteString(t.Description)
		h.WriteByte(0)
		h.Write(t.Parameters)
	}
	key := h.Sum64()
	c.mu.Lock()
	for _, p := range c.parts[key] {
		if p.system == system && sameTools(p.tools, specs) {
			c.mu.Unlock()
			return p, nil
		}
	}
	c.mu.Unlock()

	p := &staticParts{system: system}
	if system != "" {
		b, err := json.Marshal(openaiMessage(Message{Role: "system", Content: system}))
		if err != nil {
			return nil, err
		}
		p.systemJSON = b
	}
	if len(specs) > 0 {
		tools := make([]openai.Tool, len(specs))
		p.tools = make([]ToolSpec, len(specs)) // a copy: the caller's slices may change
		for i, t := range specs {
			p.tools[i] = ToolSpec{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)}
			tools[i] = openaiTool(p.tools[i])
		}
		b, err := json.Marshal(tools)
		if err != nil {
			return nil, err
		}
		p.toolsJSON = b
	}
	c.mu.Lock()
	if c.n >= maxStatic {
		c.parts, c.n = map[uint64][]*staticParts{}, 0
	}
	c.parts[key] = append(c.parts[key], p)
	c.n++
	c.mu.Unlock()
	return p, nil
}

func sameTools(a, b []ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// staticKey carries a request's encoded parts from Stream to staticDoer.
type staticKey struct{}

// staticDoer is the provider's HTTP client: it puts the encoded parts that
// Stream left in the request's context into the body: the system message
// first in "messages", the tools as "tools".
type staticDoer struct{ next openai.HTTPDoer }

var messagesKey = []byte(`"messages":[`)

func (d staticDoer) Do(req *http.Request) (*http.Response, error) {
	p, _ := req.Context().Value(staticKey{}).(*staticParts)
	if p == nil || req.Body == nil {
		return d.next.Do(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	// The first `"messages":[` is the key: inside a JSON string every quote
	// is escaped. The last '}' closes the object.
	at, end := 0, bytes.LastIndexByte(body, '}')
	if p.systemJSON != nil {
		if at = bytes.Index(body, messagesKey); at < 0 {
			return nil, errors.New("llm: the request body has no messages")
		}
		at += len(messagesKey)
	}
	if end < at {
		return nil, errors.New("llm: the request body is not a JSON object")
	}
	out := make([]byte, 0, len(body)+len(p.systemJSON)+len(p.toolsJSON)+len(`,,"tools":`))
	out = append(out, body[:at]...)
	if p.systemJSON != nil {
		out = append(out, p.systemJSON...)
		if body[at] != ']' {
			out = append(out, ',')
		}
	}
	out = append(out, body[at:end]...)
	if p.toolsJSON != nil {
		out = append(out, `,"tools":`...)
		out = append(out, p.toolsJSON...)
	}
	out = append(out, body[end:]...)
	req.ContentLength = int64(len(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	req.Body, _ = req.GetBody()
	return d.next.Do(req)
}

// withStatic returns ctx carrying the encoded system message and tools of
// a request for staticDoer.
func withStatic(ctx context.Context, system string, specs []ToolSpec) (context.Context, error) {
	if system == "" && len(specs) == 0 {
		return ctx, nil
	}
	p, err := statics.encode(system, specs)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, staticKey{}, p), nil
}
