package listener

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestCapListener: a full listener makes room by closing its oldest
// untrusted connection; trusted connections are never closed to make room,
// and when every connection is trusted a new one is closed instead.
func TestCapListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newCapListener(raw, 3)
	defer l.Close()
	dial := func() (client net.Conn, server *capConn) {
		t.Helper()
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c, s.(*capConn)
	}
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF
	}
	_, s1 := dial()
	c2, _ := dial()
	_, s3 := dial()
	s1.trust()
	c4, _ := dial() // full: c2 is the oldest untrusted
	if !closed(c2) {
		t.Fatal("the oldest untrusted connection was not closed")
	}
	s3.trust()
	_, s5 := dial() // full: c4 goes
	if !closed(c4) {
		t.Fatal("the next untrusted connection was not closed")
	}
	s5.trust()
	// All three trusted: a new connection is itself closed.
	c6, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c6.Close()
	go l.Accept()
	if !closed(c6) {
		t.Fatal("a connection beyond the cap of trusted ones was kept")
	}
	// Exactly c2, c4 and c6 were dropped: the trusted c1, c3, c5 never.
	if l.dropped.Load() != 3 || l.open != 3 || l.unproven.Len() != 0 {
		t.Fatalf("dropped %d, open %d, untrusted %d", l.dropped.Load(), l.open, l.unproven.Len())
	}
	if connCap(1024) != 512 || connCap(20) != minConns || connCap(1<<20) != maxConns {
		t.Fatal("connCap")
	}
}
