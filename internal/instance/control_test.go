package instance_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/internal/instance"
)

type echo struct {
	Text string `json:"text"`
}

// TestControlSocketRoundTrip: a request reaches the listening process's
// handler and its answer (or error) comes back; the socket is owner-only;
// nothing listening, or a socket file left by a dead process, is
// ErrNotListening, and the next Listen replaces that file.
func TestControlSocketRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var resp echo
	if err := instance.Call(ctx, dir, "echo", echo{"hi"}, &resp); !errors.Is(err, instance.ErrNotListening) {
		t.Fatalf("nothing listening: %v", err)
	}
	// A dead process's socket: the file is there, nobody accepts.
	l, err := net.Listen("unix", filepath.Join(dir, instance.SocketFile))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if err := instance.Call(ctx, dir, "echo", echo{"hi"}, &resp); !errors.Is(err, instance.ErrNotListening) {
		t.Fatalf("stale socket: %v", err)
	}

	s, err := instance.Listen(dir, func(ctx context.Context, op string, req json.RawMessage) (any, error) {
		var e echo
		if err := json.Unmarshal(req, &e); err != nil {
			return nil, err
		}
		if op != "echo" {
			return nil, errors.New("no such op: " + op)
		}
		return echo{"echo: " + e.Text}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v: want a socket with mode 0600", fi.Mode(), err)
	}
	if err := instance.Call(ctx, dir, "echo", echo{"hi"}, &resp); err != nil || resp.Text != "echo: hi" {
		t.Fatalf("answer %+v %v", resp, err)
	}
	if err := instance.Call(ctx, dir, "shout", echo{"hi"}, &resp); err == nil || err.Error() != "no such op: shout" {
		t.Fatalf("handler error: %v", err)
	}
	// A line that is not a request is answered with an error, not dropped.
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("not json\n"))
	buf := make([]byte, 512)
	n, _ := c.Read(buf)
	c.Close()
	var e struct{ Error string }
	if json.Unmarshal(buf[:n], &e) != nil || e.Error == "" {
		t.Fatalf("answer to a bad request: %q", buf[:n])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket file outlived Close: %v", err)
	}
	if err := instance.Call(ctx, dir, "echo", echo{"hi"}, &resp); !errors.Is(err, instance.ErrNotListening) {
		t.Fatalf("after Close: %v", err)
	}
	// A data dir too deep for a socket's name: Listen says so, Call finds
	// nothing listening (the command then works by itself).
	deep := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if s, err := instance.Listen(deep, nil); err == nil {
		s.Close()
		t.Fatal("a socket path over the limit was listened on")
	}
	if err := instance.Call(ctx, deep, "echo", echo{"hi"}, &resp); !errors.Is(err, instance.ErrNotListening) {
		t.Fatalf("too deep: %v", err)
	}
}

// TestControlCloseCancelsARequest: Close does not wait forever for a
// request being answered: its context ends, and the caller gets an error.
func TestControlCloseCancelsARequest(t *testing.T) {
	dir := t.TempDir()
	started := make(chan struct{})
	s, err := instance.Listen(dir, func(ctx context.Context, op string, req json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var resp echo
		done <- instance.Call(context.Background(), dir, "wait", echo{}, &resp)
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a request cut short by Close succeeded")
	}
}
