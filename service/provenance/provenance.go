// Package provenance owns where the text in a chat model's context came
// from: the untrusted sources a turn has put before the model (its taint,
// Set), how a tool's result is judged (Of), and how a stored message keeps
// its sources (Meta, FromMeta), so a conversation read back after a
// restart, or through its compaction summary, is tainted as it was.
//
// The table (docs/SECURITY.md, "Where the words came from"): the user's own
// words and Jarvis's prompts are trusted; a tool result is trusted only when
// the desktop vouches for it (Jarvis's own confirmation, a workspace file
// without a download mark); everything else — a command's output, a
// downloaded file, an MCP result, another agent's reply or delegated
// message, memory entries written after untrusted content, attachments, a
// summary of untrusted messages — is untrusted and named.
package provenance

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"jarvis/api"
)

// Set is the untrusted sources of a turn's context, in the order they came,
// each once. The zero value is empty; safe for concurrent use.
type Set struct {
	mu   sync.Mutex
	list []api.Source
}

// Add records sources not yet in s.
func (s *Set) Add(srcs ...api.Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range srcs {
		if !slices.Contains(s.list, src) {
			s.list = append(s.list, src)
		}
	}
}

// List returns a copy of the sources, nil when there are none.
func (s *Set) List() []api.Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		return nil
	}
	return slices.Clone(s.list)
}

// Any reports whether untrusted content is in the context.
func (s *Set) Any() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list) > 0
}

// Of judges tool name's result: none when it was vouched for (api.Trusted)
// or failed (an error is Jarvis's own words, or a denial), else its one
// source: the Origin its runner gave, or the tool itself.
func Of(name string, r api.ToolResult) []api.Source {
	switch {
	case r.Trust == api.Trusted || !r.OK:
		return nil
	case r.Origin != nil:
		return []api.Source{*r.Origin}
	}
	return []api.Source{{Kind: "tool", Name: name}}
}

// meta is the part of a message's meta this package owns.
type meta struct {
	Untrusted []api.Source `json:"untrusted,omitempty"`
}

// Meta returns the message meta m (a JSON object or "") with the sources
// added under "untrusted"; m unchanged when srcs is empty or m is not an
// object.
func Meta(m string, srcs ...api.Source) string {
	if len(srcs) == 0 {
		return m
	}
	obj := map[string]json.RawMessage{}
	if m != "" && json.Unmarshal([]byte(m), &obj) != nil {
		return m
	}
	b, err := json.Marshal(srcs)
	if err != nil {
		return m
	}
	obj["untrusted"] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return m
	}
	return string(out)
}

// FromMeta returns the sources a message's meta records.
func FromMeta(m string) []api.Source {
	if m == "" {
		return nil
	}
	var x meta
	if json.Unmarshal([]byte(m), &x) != nil {
		return nil
	}
	return x.Untrusted
}

// Verdict is a service tool's own word on its result (Judge): the chat
// runtime gives each service tool call one in its context, and a tool that
// knows better than its name (memory without untrusted entries, a reply of
// an agent whose turn read nothing untrusted) says so.
type Verdict struct {
	mu     sync.Mutex
	set    bool
	trust  string
	origin *api.Source
}

type verdictKey struct{}

// WithVerdict returns ctx carrying a new Verdict for one call.
func WithVerdict(ctx context.Context) (context.Context, *Verdict) {
	v := &Verdict{}
	return context.WithValue(ctx, verdictKey{}, v), v
}

// Judge records, for the call ctx belongs to, whether its result is to be
// trusted (api.Trusted or api.Untrusted) and where an untrusted one came
// from. Without a Verdict in ctx it does nothing.
func Judge(ctx context.Context, trust string, origin *api.Source) {
	if v, ok := ctx.Value(verdictKey{}).(*Verdict); ok {
		v.mu.Lock()
		v.set, v.trust, v.origin = true, trust, origin
		v.mu.Unlock()
	}
}

// Get returns what the tool judged; ok is false when it said nothing.
func (v *Verdict) Get() (trust string, origin *api.Source, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.trust, v.origin, v.set
}
