package service

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"jarvis/api"
	"jarvis/service/store"
)

// routes is the one route table of the service.
func (s *Service) routes() http.Handler {
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	mux.Handle("GET /health", s.adapt(s.handleHealth))
	mux.Handle("POST /v1/sessions", s.adapt(s.handleCreateSession))
	mux.Handle("POST /v1/chat", s.adapt(s.handleChat))
	mux.Handle("POST /v1/chat/cancel", s.adapt(s.handleCancel))
	mux.Handle("GET /v1/stream", s.adapt(s.handleStream))
	mux.Handle("POST /v1/tools/result", s.adapt(s.handleToolResult))
	mux.Handle("PUT /v1/tools/catalog", s.adapt(s.handlePutToolCatalog)) // toolcatalog.go
	mux.Handle("GET /v1/tools/catalog", s.adapt(s.handleGetToolCatalog))
	mux.Handle("GET /v1/agents", s.adapt(s.handleAgents))
	mux.Handle("GET /v1/providers", s.adapt(s.handleProviders))
	mux.Handle("PUT /v1/providers", s.adapt(s.handleSetProvider))
	mux.Handle("POST /v1/agents/{agentId}/test", s.adapt(s.handleProxyTest))
	mux.Handle("POST /proxy/agents/{agentId}/sessions/{sessionId}/callback", s.adapt(s.handleProxyCallback))
	mux.Handle("POST /v1/agents/{agentId}/session", s.adapt(s.handleAgentSession))
	mux.Handle("GET /v1/sessions", s.adapt(s.handleListSessions))
	mux.Handle("GET /v1/sessions/{id}", s.adapt(s.handleGetSession))
	mux.Handle("GET /v1/sessions/{id}/messages", s.adapt(s.handleMessages))
	mux.Handle("PATCH /v1/sessions/{id}", s.adapt(s.handleUpdateSession))
	mux.Handle("POST /v1/sessions/{id}/clear", s.adapt(s.handleClearSession))
	mux.Handle("POST /v1/sessions/{id}/compact", s.adapt(s.handleCompact))
	mux.Handle("GET /v1/sessions/{id}/compactions", s.adapt(s.handleCompactions))
	mux.Handle("DELETE /v1/sessions/{id}", s.adapt(s.handleDeleteSession))
	mux.Handle("POST /api/plugins/sessions/operations/create", s.adapt(s.handleOperationsCreate))
	mux.Handle("POST /v1/memory/write", s.adapt(s.handleMemoryWrite))
	mux.Handle("GET /v1/memory/search", s.adapt(s.handleMemorySearch))
	mux.Handle("GET /v1/memory/get", s.adapt(s.handleMemoryGet))
	mux.Handle("POST /external/sessions/{sessionId}/messages", s.adapt(s.handleExternalMessage)) // agents' replies (external_callback.go)
	mux.Handle("GET /v1/external/sessions/{sessionId}", s.adapt(s.handleExternalSessionInfo))
	// Round tables (seed 003): agent registration, runs (roundtable_agents.go, roundtable_api.go).
	mux.Handle("POST /api/v1/agents", s.adapt(s.handleRTAgentCreate))
	mux.Handle("GET /api/v1/agents", s.adapt(s.handleRTAgentList))
	mux.Handle("GET /api/v1/agents/{name}", s.adapt(s.handleRTAgentGet))
	mux.Handle("PUT /api/v1/agents/{name}", s.adapt(s.handleRTAgentPut))
	mux.Handle("PATCH /api/v1/agents/{name}", s.adapt(s.handleRTAgentPatch))
	mux.Handle("DELETE /api/v1/agents/{name}", s.adapt(s.handleRTAgentDelete))
	mux.Handle("POST /v1/roundtables", s.adapt(s.handleRTStart))
	mux.Handle("GET /v1/roundtables", s.adapt(s.handleRTList))
	mux.Handle("GET /v1/roundtables/{id}", s.adapt(s.handleRTGet))
	mux.Handle("POST /v1/roundtables/{id}/cancel", s.adapt(s.handleRTCancel))
	s.patterns = mux.patterns
	mux.ServeMux.Handle("/", s.adapt(func(w http.ResponseWriter, r *http.Request) error {
		return errNotFoundRoute(r)
	}))
	return s.guard(mux)
}

// recordingMux remembers the patterns of the route table, so tests (the
// security suite) can check every route.
type recordingMux struct {
	*http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Routes returns the route table's patterns ("METHOD /path/{var}").
func (s *Service) Routes() []string { return append([]string(nil), s.patterns...) }

// handlerFunc is a handler that returns its error to the one adapter.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// httpError is an error with its HTTP status and envelope code.
type httpError struct {
	status  int
	code    string
	msg     string
	details map[string]any
}

func (e *httpError) Error() string { return e.code + ": " + e.msg }

func errorf(status int, code, format string, args ...any) *httpError {
	return &httpError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func (e *httpError) with(k string, v any) *httpError {
	if e.details == nil {
		e.details = map[string]any{}
	}
	e.details[k] = v
	return e
}

func errNotFoundRoute(r *http.Request) error {
	return errorf(http.StatusNotFound, "not_found", "no route for %s %s", r.Method, r.URL.Path)
}

// startedWriter records whether a response has begun, so that the adapter
// never writes an error envelope into a stream that is already flowing.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) { w.started = true; w.ResponseWriter.WriteHeader(code) }
func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
func (w *startedWriter) FlushError() error {
	w.started = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// adapt turns a handlerFunc into an http.Handler: it recovers panics, logs,
// maps errors to statuses and writes the error envelope.
func (s *Service) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &startedWriter{ResponseWriter: w}
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					err = errorf(http.StatusInternalServerError, "internal", "internal error")
				}
			}()
			err = h(sw, r)
		}()
		if err == nil {
			return
		}
		he := s.toHTTPError(err)
		if he.status >= 500 {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", he.status, "err", err)
		} else {
			s.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", he.status, "code", he.code)
		}
		if sw.started || r.Context().Err() != nil {
			return
		}
		writeError(w, he)
	})
}

func (s *Service) toHTTPError(err error) *httpError {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than %d bytes", mbe.Limit).with("limit_bytes", mbe.Limit)
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "not_found", "%s", err.Error())
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, "conflict", "%s", err.Error())
	case diskFull(err):
		return errorf(http.StatusInsufficientStorage, "disk_full", "the disk holding the data dir is full: free some space and retry (nothing stored was lost)")
	}
	return errorf(http.StatusInternalServerError, "internal", "internal error")
}

// diskFull reports an out-of-space error from the OS or from SQLite.
func diskFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func writeError(w http.ResponseWriter, he *httpError) {
	details := he.details
	if details == nil {
		details = map[string]any{}
	}
	writeJSON(w, he.status, api.ErrorBody{Error: api.Error{Code: he.code, Message: he.msg, Details: details}})
}

// writeJSON writes v with its length: a body larger than the server's 4 KB
// buffer would otherwise go out chunked, and a client that stops reading at
// the end of the JSON (before the last chunk) cannot reuse its connection.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// decodeJSON reads a JSON request body into v, capped at the configured size.
func (s *Service) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json (got %q)", ct)
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg().MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mbe):
			return err
		case errors.As(err, &se):
			return errorf(http.StatusBadRequest, "invalid_json", "malformed JSON at byte %d: %v", se.Offset, se).with("offset", se.Offset)
		case errors.As(err, &te):
			return errorf(http.StatusBadRequest, "invalid_json", "field %s must be %s, not %s", te.Field, te.Type, te.Value).with("field", te.Field)
		case errors.Is(err, io.EOF):
			return errorf(http.StatusBadRequest, "invalid_json", "empty body: a JSON object is required")
		}
		return errorf(http.StatusBadRequest, "invalid_json", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errorf(http.StatusBadRequest, "invalid_json", "unexpected data after the JSON object")
	}
	return nil
}

func missing(field string) error {
	return errorf(http.StatusBadRequest, "missing_field", "%s is required", field).with("field", field)
}

// guard applies the checks every route shares, before any handler runs:
// Host (DNS rebinding), Origin (cross-site requests), then the bearer token.
func (s *Service) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		port := localPort(r)
		if !s.allowNonLoopbackHost && !loopbackHost(r.Host, port) {
			writeError(w, errorf(http.StatusForbidden, "forbidden_host", "Host %q is not a loopback address of this service", r.Host))
			return
		}
		if !s.sameOrigin(r, port) {
			writeError(w, errorf(http.StatusForbidden, "forbidden_origin", "cross-origin requests are refused"))
			return
		}
		if needsToken(r.URL.Path) {
			if !s.validToken(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="jarvis"`)
				writeError(w, errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token"))
				return
			}
			trustConn(r.Context()) // never dropped to make room (conncap.go)
		}
		s.noteBaseURL(r) // the default callbackBaseUrl of external agents
		next.ServeHTTP(w, r)
	})
}

func needsToken(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/")
}

func (s *Service) validToken(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// localPort is the port the request's connection arrived on.
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			return p
		}
	}
	return ""
}

// loopbackHost accepts exactly 127.0.0.1:PORT, localhost:PORT and [::1]:PORT
// for the port the request arrived on.
func loopbackHost(host, port string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != port || port == "" {
		return false
	}
	switch strings.ToLower(h) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// sameOrigin refuses requests that a web page on another origin made: a
// foreign Origin header, or Sec-Fetch-Site cross-site/same-site.
func (s *Service) sameOrigin(r *http.Request, port string) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" {
		return s.allowedOrigins[o]
	}
	if loopbackHost(u.Host, port) {
		return true
	}
	return s.allowedOrigins[o]
}
