// Package redact owns the removal of secret values from what the service
// shows, stores, logs and sends on. Agents answer with whatever they like,
// and one that echoes the request it got echoes its credentials: a proxy
// agent's header secret, a round-table agent's key, a model provider's key.
// A Set knows every secret value the service has read from its secret store
// (Record wraps the store, so that nothing has to remember to add them) and
// replaces each, wherever it appears, with "[redacted]": in error excerpts,
// events, stored messages, statuses, tool results and log lines (Handler).
package redact

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Mark replaces a secret value.
const Mark = "[redacted]"

// MinLen is the shortest value redacted: shorter ones are not secrets worth
// the name, and replacing them would mangle ordinary text.
const MinLen = 8

// Set is the secret values in play. The zero value is empty and ready; a
// Set is safe for concurrent use.
type Set struct {
	mu   sync.RWMutex
	vals map[string]bool
	r    *strings.Replacer // nil when empty
}

// Add makes v (and the forms it takes in JSON, URLs and base64) redacted
// from now on.
func (s *Set) Add(v string) {
	if len(v) < MinLen {
		return
	}
	forms := []string{v, url.QueryEscape(v), base64.StdEncoding.EncodeToString([]byte(v))}
	if j, err := json.Marshal(v); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals == nil {
		s.vals = map[string]bool{}
	}
	added := false
	for _, f := range forms {
		if !s.vals[f] {
			s.vals[f], added = true, true
		}
	}
	if !added {
		return
	}
	all := make([]string, 0, len(s.vals))
	for f := range s.vals {
		all = append(all, f)
	}
	// Longest first: a value that contains another is replaced whole.
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(all))
	for _, f := range all {
		pairs = append(pairs, f, Mark)
	}
	s.r = strings.NewReplacer(pairs...)
}

// String returns text with every value replaced.
func (s *Set) String(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r == nil || len(text) < MinLen {
		return text
	}
	return r.Replace(text)
}

// Bytes is String for a byte slice (JSON, a body); b itself is unchanged.
func (s *Set) Bytes(b []byte) []byte {
	if s == nil {
		return b
	}
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r == nil {
		return b
	}
	out := r.Replace(string(b))
	if len(out) == len(b) && out == string(b) {
		return b
	}
	return []byte(out)
}

// JSON returns v with every string in it redacted, through its JSON form;
// v itself when nothing had to change or v does not round-trip.
func JSON[T any](s *Set, v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	r := s.Bytes(b)
	if &r[0] == &b[0] {
		return v
	}
	var out T
	if json.Unmarshal(r, &out) != nil {
		return v
	}
	return out
}

// Store is a secret store (the service's Secrets).
type Store interface {
	Get(ref string) (string, error)
}

type writer interface {
	Set(ref, value string) error
	Delete(ref string) error
}

// Record returns st with every value it returns or is given added to s.
// When st can also store and delete secrets, so can the result.
func Record(st Store, s *Set) Store {
	if st == nil {
		return nil
	}
	r := recording{st, s}
	if w, ok := st.(writer); ok {
		return recordingWriter{r, w}
	}
	return r
}

type recording struct {
	st  Store
	set *Set
}

func (r recording) Get(ref string) (string, error) {
	v, err := r.st.Get(ref)
	if err == nil {
		r.set.Add(v)
	}
	return v, err
}

type recordingWriter struct {
	recording
	w writer
}

func (r recordingWriter) Set(ref, value string) error {
	r.set.Add(value)
	return r.w.Set(ref, value)
}

func (r recordingWriter) Delete(ref string) error { return r.w.Delete(ref) }

// Handler returns h with s applied to each record's message and to the
// text of every attribute (errors included) before h sees it.
func Handler(h slog.Handler, s *Set) slog.Handler { return handler{h, s} }

type handler struct {
	h slog.Handler
	s *Set
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			out[i] = h.attr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		// Errors and other values are logged by their text.
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.s.String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.s.String(x.String()))
		case []byte:
			return slog.String(a.Key, h.s.String(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return handler{h.h.WithAttrs(out), h.s}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.h.WithGroup(name), h.s} }
