package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	sse "github.com/tmaxmax/go-sse"

	"jarvis/api"
	"jarvis/service/events"
)

// sseRetry is the reconnection delay every stream announces at its start.
const sseRetry = time.Second

// Stream is one SSE response: a session's events after a seq.
type Stream struct {
	Hub            *events.Hub
	SessionID      string
	After          int64
	Last           func(events.Event) bool // true: ev was the stream's final event
	Reset          *api.ResetEvent         // sent first when the client's Last-Event-ID was unknown
	Closing        <-chan struct{}         // closed when the service shuts down
	HeartbeatEvery time.Duration
	Log            *slog.Logger
}

// Serve writes the stream until the request ends, Closing is closed, or
// Last says an event was the final one. It is the one SSE writer.
func (o Stream) Serve(w http.ResponseWriter, r *http.Request) error {
	sessionID, after, last := o.SessionID, o.After, o.Last
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	sw, err := sse.Upgrade(w, r)
	if err != nil {
		return Errorf(http.StatusInternalServerError, "internal", "streaming is not supported by this connection")
	}
	// The stream opens with its reconnection delay (retry:), so that an
	// EventSource reconnects after sseRetry, not after its own default.
	if err := sw.Send(&sse.Message{Retry: sseRetry}); err != nil {
		return nil
	}
	if err := sw.Flush(); err != nil { // send the headers now: the client sees the stream is open
		return nil
	}
	if o.Reset != nil {
		// The id is unknown: say so explicitly, then continue with new events.
		b, _ := json.Marshal(o.Reset)
		m := &sse.Message{ID: sse.ID(strconv.FormatInt(after, 10)), Type: sse.Type(api.EventReset)}
		m.AppendData(string(b))
		if sw.Send(m) != nil || sw.Flush() != nil {
			return nil
		}
	}
	ctx := r.Context()
	ctx, cancel := contextUntil(ctx, o.Closing)
	defer cancel()
	heartbeat := func() error {
		m := &sse.Message{}
		m.AppendComment("heartbeat")
		if err := sw.Send(m); err != nil {
			return err
		}
		return sw.Flush()
	}
	err = o.Hub.Follow(ctx, sessionID, after, events.FollowOptions{Idle: heartbeat, IdleEvery: o.HeartbeatEvery, Flush: sw.Flush}, func(ev events.Event) error {
		if err := writeEvent(sw, ev); err != nil {
			return err
		}
		if last(ev) {
			return events.ErrStop
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, events.ErrStop) {
		o.Log.Debug("stream ended", "session", sessionID, "err", err)
	}
	return nil // once streaming, errors cannot become a status
}

// writeEvent writes one event with its id; Follow flushes.
func writeEvent(sw *sse.Session, ev events.Event) error {
	m := &sse.Message{ID: sse.ID(strconv.FormatInt(ev.Seq, 10))}
	t, err := sse.NewType(ev.Type)
	if err != nil {
		return err
	}
	m.Type = t
	m.AppendData(string(ev.Data))
	return sw.Send(m)
}

// contextUntil returns a context that also ends when stop is closed.
func contextUntil(parent context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
