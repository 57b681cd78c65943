package roundtable

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Loopback and private addresses are legitimate agent homes (a user's own
// machine or LAN), so only the addresses that reach a cloud instance's
// metadata service or the local link are refused.
func metadataAddr(a netip.Addr) bool {
	return a == netip.AddrFrom16([16]byte{0xfd, 0x00, 0x0e, 0xc2, 14: 0x02, 15: 0x54}) || // AWS IMDS over IPv6, fd00:ec2::254
		a == netip.AddrFrom4([4]byte{100, 100, 100, 200}) // Alibaba Cloud metadata
}

func nat64(a netip.Addr) bool {
	return netip.PrefixFrom(netip.AddrFrom16([16]byte{0x00, 0x64, 0xff, 0x9b}), 96).Contains(a)
}

// blockedHostnames are names that cloud providers resolve to their metadata
// service; refusing them at registration gives a clearer error than the
// dial-time refusal would.
func blockedHostname(host string) bool {
	switch strings.TrimSuffix(strings.ToLower(host), ".") {
	case "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal":
		return true
	}
	return false
}

// BlockedAddr reports whether addr is a link-local (169.254.0.0/16,
// fe80::/10) or metadata (fd00:ec2::254, 100.100.100.200) address, including
// those forms embedded in IPv4-mapped or NAT64 IPv6 addresses.
func BlockedAddr(addr netip.Addr) bool {
	addr = addr.WithZone("").Unmap()
	if addr.Is6() && nat64(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case !addr.IsValid():
		return true
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return true
	case metadataAddr(addr):
		return true
	}
	return false
}

// dialControl runs after DNS resolution, on the very address the socket is
// about to connect to, so a hostname that resolves (or re-resolves, in a
// rebinding attack) to a metadata address is still refused.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrBlockedAddress, address)
	}
	if BlockedAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, ap.Addr())
	}
	return nil
}

// SafeDialer returns a net.Dialer that refuses link-local and metadata
// addresses after resolution. Use its DialContext in any transport that
// talks to agents.
func SafeDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialControl}
}

// NewSafeClient returns the client the engine uses when Options.Client is
// nil: dials are guarded by SafeDialer, environment proxies are ignored
// (a proxy would dial on our behalf and bypass the guard), and redirects are
// never followed. It sets no overall timeout; the engine bounds each call.
func NewSafeClient() *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           SafeDialer().DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Agents have no reason to send large headers; the body has its own cap.
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: t, CheckRedirect: refuseRedirect}
}

func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// withoutRedirects returns a shallow copy of c that never follows redirects,
// leaving the caller's client untouched.
func withoutRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = refuseRedirect
	return &cc
}

// Resolver is the part of *net.Resolver that registration checks need.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}
