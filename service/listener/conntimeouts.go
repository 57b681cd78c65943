package listener

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Server timeouts. net/http starts a new connection's ReadHeaderTimeout at
// accept, not at its first byte, while a connection between two requests
// waits up to IdleTimeout. An HTTP client's connection pool dials
// connections it then parks unused (the request that asked for one got a
// freed connection first); with the header timeout running from accept the
// server closed such a connection silently at second 10, and a client that
// handed it to its next POST on a busy machine before noticing got EOF (Go's
// Transport retries only idempotent requests). headerTimeout still bounds a
// slow header once its first byte is in; the wait for that first byte is an
// idle wait, as between two requests.
const (
	headerTimeout = 10 * time.Second
	idleTimeout   = 2 * time.Minute
)

// NewHTTPServer returns the http.Server settings the service runs with:
// header timeouts against slow clients, no write timeout (streams are long).
// Serve it on a listener from Listen (or wrapped by IdleFirstListener), so
// that a connection waiting for its first request is kept as long as an
// idle one.
func NewHTTPServer(h http.Handler) *http.Server {
	return newHTTPServer(h, headerTimeout, idleTimeout)
}

func newHTTPServer(h http.Handler, header, idle time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: header,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       withConn, // guard trusts the connections of authenticated requests (conncap.go)
	}
}

// IdleFirstListener wraps ln so that the read deadline a server sets on a new
// connection before its first request (the header timeout, from accept)
// starts at the connection's first byte instead; until then the connection
// may wait idle (the server's IdleTimeout), like one between two requests.
func IdleFirstListener(ln net.Listener, idle time.Duration) net.Listener {
	return &idleFirstListener{Listener: ln, idle: idle}
}

type idleFirstListener struct {
	net.Listener
	idle time.Duration
}

func (l *idleFirstListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idleFirstConn{Conn: c, idle: l.idle}, nil
}

// idleFirstConn defers the first read deadline of a connection to its first
// byte. After that it is the plain connection.
type idleFirstConn struct {
	net.Conn
	idle time.Duration

	mu      sync.Mutex
	started bool          // the first byte has arrived
	pending time.Duration // the deadline the server asked for, from now, before the first byte
}

func (c *idleFirstConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started && !t.IsZero() {
		now := time.Now()
		if d := t.Sub(now); d > 0 && d < c.idle {
			c.pending = d
			t = now.Add(c.idle)
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *idleFirstConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *idleFirstConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		if !c.started {
			c.started = true
			if c.pending > 0 { // the header timeout runs from now
				c.Conn.SetReadDeadline(time.Now().Add(c.pending))
			}
		}
		c.mu.Unlock()
	}
	return n, err
}

// CloseWrite keeps the half-close net/http uses before closing a connection.
func (c *idleFirstConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
