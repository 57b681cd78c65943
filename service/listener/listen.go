package listener

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrNotLoopback is returned by Listen for a non-loopback address.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen opens a TCP listener on addr, refusing non-loopback addresses
// unless allowNonLoopback is set. The listener caps its connections
// (conncap.go): serve it with NewHTTPServer, whose handler chain trusts
// the connections of authenticated requests. Its connections may wait for
// their first request as long as idle ones (IdleFirstListener).
func Listen(addr string, allowNonLoopback bool) (net.Listener, error) {
	ln, err := listen(addr, allowNonLoopback)
	if err != nil {
		return nil, err
	}
	return newCapListener(IdleFirstListener(ln, idleTimeout), connCap(openFilesLimit())), nil
}

func listen(addr string, allowNonLoopback bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if !allowNonLoopback {
		ip := net.ParseIP(host)
		if host == "localhost" {
			ip = net.IPv4(127, 0, 0, 1)
			addr = net.JoinHostPort("127.0.0.1", addr[strings.LastIndex(addr, ":")+1:])
		}
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("--addr %q: %w: the service binds 127.0.0.1 or [::1] only (use --allow-non-loopback to override, at your own risk)", addr, ErrNotLoopback)
		}
	}
	return net.Listen("tcp", addr)
}

// Shutdown stops srv gracefully within d, then closes what is left.
func Shutdown(srv *http.Server, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
}
