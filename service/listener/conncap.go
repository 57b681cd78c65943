package listener

// The connection cap. Anyone on the machine can open connections to the
// service; left uncapped, 20,000 idle ones exhausted its file descriptors
// and the desktop's requests could no longer be accepted. The listener
// holds at most a fixed number of connections; when it is full, a new
// connection takes the place of the oldest one that has not yet carried an
// authenticated request (guard trusts a connection once a request on it
// passed the bearer token check). Capacity is so reserved for the desktop
// and other clients with the token: their connections are never dropped by
// the cap, and their new ones are always accepted while any connection
// without the token is open. A connection that sends nothing is closed by
// the server's ReadHeaderTimeout, an idle keep-alive one by its IdleTimeout.

import (
	"container/list"
	"context"
	"net"
	"sync"
	"sync/atomic"
)

const (
	minConns = 64
	maxConns = 4096
)

// connCap returns the cap for an open-files limit: half of it (the rest is
// for databases, outbound connections and the programs the service
// starts), within [minConns, maxConns].
func connCap(nofile uint64) int {
	return int(min(max(nofile/2, minConns), maxConns))
}

// capListener is a net.Listener that holds at most max connections.
type capListener struct {
	net.Listener
	max int

	mu       sync.Mutex
	open     int
	unproven list.List // of *capConn, oldest first: not yet trusted
	dropped  atomic.Int64
}

func newCapListener(ln net.Listener, max int) *capListener {
	return &capListener{Listener: ln, max: max}
}

// Accept returns the next connection, making room for it when the
// listener is full by closing the oldest untrusted one; with none to close
// (every connection is trusted) the new one is closed instead.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &capConn{Conn: c, l: l}
		l.mu.Lock()
		var victim *capConn
		if l.open >= l.max {
			e := l.unproven.Front()
			if e == nil {
				l.mu.Unlock()
				l.dropped.Add(1)
				c.Close()
				continue
			}
			victim = e.Value.(*capConn)
			l.unproven.Remove(e)
			victim.elem = nil
		}
		l.open++
		cc.elem = l.unproven.PushBack(cc)
		l.mu.Unlock()
		if victim != nil {
			l.dropped.Add(1)
			victim.Close()
		}
		return cc, nil
	}
}

// capConn is a connection counted by its listener.
type capConn struct {
	net.Conn
	l       *capListener
	elem    *list.Element // in l.unproven; nil once trusted or closed (under l.mu)
	trusted atomic.Bool
	once    sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		if c.elem != nil {
			c.l.unproven.Remove(c.elem)
			c.elem = nil
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// trust exempts the connection from being dropped to make room.
func (c *capConn) trust() {
	if c.trusted.Swap(true) {
		return
	}
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.unproven.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
}

type connKey struct{}

// withConn is the http.Server's ConnContext: it lets guard find the
// connection a request came on.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*capConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// TrustConn marks the connection of an authenticated request as trusted.
func TrustConn(ctx context.Context) {
	if cc, ok := ctx.Value(connKey{}).(*capConn); ok {
		cc.trust()
	}
}
