// Package httpapi is the service's HTTP edge that no runtime owns: the error
// envelope (Error, Errorf, WriteError), the one adapter that turns a
// handler's error into that envelope (Adapt), request-body decoding
// (DecodeJSON), JSON responses (WriteJSON) and the guard every route sits
// behind (Host, Origin, bearer token). Routes themselves are the root
// service's composition; this package imports no runtime.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"jarvis/api"
	"jarvis/service/store"
)

// Error is an error with its HTTP status and envelope code.
type Error struct {
	Status  int
	Code    string
	Msg     string
	Details map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// Errorf is an Error with a formatted message.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// With adds a detail to the envelope's details object.
func (e *Error) With(k string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[k] = v
	return e
}

// Missing is the error of a required field left out of a request.
func Missing(field string) error {
	return Errorf(http.StatusBadRequest, "missing_field", "%s is required", field).With("field", field)
}

// NotFoundRoute is the error of a request no route matches.
func NotFoundRoute(r *http.Request) error {
	return Errorf(http.StatusNotFound, "not_found", "no route for %s %s", r.Method, r.URL.Path)
}

// ToError maps any error to the envelope a client gets: an *Error as is,
// the store's not-found and conflict, an over-long body, a full disk; the
// rest is an internal error whose detail only the log sees.
func ToError(err error) *Error {
	var he *Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mbe):
		return Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than %d bytes", mbe.Limit).With("limit_bytes", mbe.Limit)
	case errors.Is(err, store.ErrNotFound):
		return Errorf(http.StatusNotFound, "not_found", "%s", err.Error())
	case errors.Is(err, store.ErrConflict):
		return Errorf(http.StatusConflict, "conflict", "%s", err.Error())
	case diskFull(err):
		return Errorf(http.StatusInsufficientStorage, "disk_full", "the disk holding the data dir is full: free some space and retry (nothing stored was lost)")
	}
	return Errorf(http.StatusInternalServerError, "internal", "internal error")
}

// diskFull reports an out-of-space error from the OS or from SQLite.
func diskFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// WriteError writes the error envelope.
func WriteError(w http.ResponseWriter, he *Error) {
	details := he.Details
	if details == nil {
		details = map[string]any{}
	}
	WriteJSON(w, he.Status, api.ErrorBody{Error: api.Error{Code: he.Code, Message: he.Msg, Details: details}})
}

// LiveSession returns the session id names, or the error of a request that
// names none (missing field) or one that does not exist or was deleted
// (404 session_not_found, with the field).
func LiveSession(ctx context.Context, st *store.Store, id, field string) (store.Session, error) {
	if id == "" {
		return store.Session{}, Missing(field)
	}
	// A point read of microseconds: with a cancelable context the SQLite
	// driver would arm a watch on it for this one statement, which costs
	// more than the read (about 60 µs against 23 measured in process).
	sess, err := st.Session(context.WithoutCancel(ctx), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sess.DeletedAt != "") {
		return sess, Errorf(http.StatusNotFound, "session_not_found", "no session %q", id).With("field", field)
	}
	return sess, err
}
