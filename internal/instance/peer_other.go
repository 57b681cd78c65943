//go:build !linux

package instance

import "net"

// samePeer relies on the socket file's mode off Linux.
func samePeer(net.Conn) error { return nil }
