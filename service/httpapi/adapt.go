package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
)

// HandlerFunc is a handler that returns its error to the one adapter.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

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

// Adapt turns a HandlerFunc into an http.Handler: it recovers panics, logs,
// maps errors to statuses and writes the error envelope.
func Adapt(log *slog.Logger, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &startedWriter{ResponseWriter: w}
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					err = Errorf(http.StatusInternalServerError, "internal", "internal error")
				}
			}()
			err = h(sw, r)
		}()
		if err == nil {
			return
		}
		he := ToError(err)
		if he.Status >= 500 {
			log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", he.Status, "err", err)
		} else {
			log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", he.Status, "code", he.Code)
		}
		if sw.started || r.Context().Err() != nil {
			return
		}
		WriteError(w, he)
	})
}

// WriteJSON writes v with its length: a body larger than the server's 4 KB
// buffer would otherwise go out chunked, and a client that stops reading at
// the end of the JSON (before the last chunk) cannot reuse its connection.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
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

// DecodeJSON reads a JSON request body into v, capped at maxBytes.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, maxBytes int64) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return Errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json (got %q)", ct)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mbe):
			return err
		case errors.As(err, &se):
			return Errorf(http.StatusBadRequest, "invalid_json", "malformed JSON at byte %d: %v", se.Offset, se).With("offset", se.Offset)
		case errors.As(err, &te):
			return Errorf(http.StatusBadRequest, "invalid_json", "field %s must be %s, not %s", te.Field, te.Type, te.Value).With("field", te.Field)
		case errors.Is(err, io.EOF):
			return Errorf(http.StatusBadRequest, "invalid_json", "empty body: a JSON object is required")
		}
		return Errorf(http.StatusBadRequest, "invalid_json", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return Errorf(http.StatusBadRequest, "invalid_json", "unexpected data after the JSON object")
	}
	return nil
}
