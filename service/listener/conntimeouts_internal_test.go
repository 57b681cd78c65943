package listener

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// startTimeoutServer serves /health with the service's timeout settings,
// scaled down: a 200 ms header timeout, a 30 s idle timeout.
func startTimeoutServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), 200*time.Millisecond, 30*time.Second)
	go srv.Serve(IdleFirstListener(ln, srv.IdleTimeout))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestParkedConnectionSurvivesHeaderTimeout: a connection an HTTP client
// dialed and parked unused is still served after the header timeout has
// passed since accept (it used to be closed silently, and the POST the
// client then sent on it got EOF).
func TestParkedConnectionSurvivesHeaderTimeout(t *testing.T) {
	addr := startTimeoutServer(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(600 * time.Millisecond) // three header timeouts, parked
	if _, err := io.WriteString(c, "POST /x HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the parked connection was closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestSlowHeaderStillTimesOut: once a request's first byte is in, its header
// must complete within the header timeout, as before (slow-header clients).
func TestSlowHeaderStillTimesOut(t *testing.T) {
	addr := startTimeoutServer(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHo"); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection; it would wait the idle timeout (30 s)
	// if the header timeout no longer applied, and the read below would
	// fail with our own deadline instead of EOF.
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err = io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a stalled header was not timed out by the server")
	}
}

// TestServiceListenerDefersHeaderTimeout: Listen's listener, the one the
// service binaries serve on, caps connections (conncap.go) over the
// idle-first listener.
func TestServiceListenerDefersHeaderTimeout(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, ok := ln.(*capListener)
	if !ok {
		t.Fatalf("Listen returned %T, not the connection cap", ln)
	}
	if _, ok := cl.Listener.(*idleFirstListener); !ok {
		t.Fatalf("the connection cap wraps %T, not the idle-first listener", cl.Listener)
	}
}
