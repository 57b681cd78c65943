// Package netguard owns the one check of the addresses the service calls
// out to: external agents' inputUrl, proxy agents' url and round-table
// agents' base URL. Each is checked when it is configured or registered
// (a literal address, a metadata host name, a name resolved once) and
// again at connect time, on the very address the socket is about to
// connect to (Control), so a name that resolves, or re-resolves in a DNS
// rebinding attack, to a refused address still never gets a connection.
//
// The classes come from the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (plus the multicast blocks and the deprecated site-local and
// IPv4-compatible IPv6 forms), matched by longest prefix. An IPv6 address
// that embeds an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96,
// 6to4 2002::/16) is judged by the address it embeds.
//
// Loopback and private addresses are legitimate homes for agents (the
// user's own machine or LAN) and are allowed; link-local, cloud-metadata,
// unspecified, multicast, broadcast and every other special-purpose block
// (documentation, benchmarking, 192.0.0.0/24, reserved, Teredo, ...) are
// refused.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is wrapped by every refusal.
var ErrRefused = errors.New("address refused")

// Class is what an address is, for the purpose of calling it.
type Class uint8

// Classes. Only Public, Loopback and Private may be called.
const (
	Invalid     Class = iota // not an IP address
	Public                   // globally reachable
	Loopback                 // 127.0.0.0/8, ::1
	Private                  // RFC 1918, shared address space (100.64.0.0/10), unique-local (fc00::/7)
	LinkLocal                // 169.254.0.0/16, fe80::/10, and link-local multicast
	Metadata                 // a cloud instance's metadata service
	Unspecified              // 0.0.0.0/8 ("this network"), ::
	Multicast                // 224.0.0.0/4, ff00::/8
	Special                  // any other special-purpose block: not an agent's address
)

var classNames = [...]string{"invalid", "public", "loopback", "private", "link-local", "metadata", "unspecified", "multicast", "special-purpose"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// Callable reports whether an agent may be called at an address of class c.
func (c Class) Callable() bool { return c == Public || c == Loopback || c == Private }

// embed says how an IPv6 block carries an IPv4 address.
type embed uint8

const (
	noEmbed    embed = iota
	embedLow32       // the last 32 bits (IPv4-mapped, NAT64 /96)
	embed6to4        // bits 16 to 47
)

type entry struct {
	prefix netip.Prefix
	class  Class
	name   string // the registry's name for the block
	embed  embed
}

// registry is the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry), every
// entry, with the class that follows from its "globally reachable" and
// purpose columns; then the multicast blocks, the deprecated IPv6 forms,
// and the metadata services' addresses. Longest prefix wins, so a globally
// reachable entry inside a larger special block (AS112 inside 2001::/23)
// is Public, and a metadata address inside a private block is Metadata.
var registry = func() []entry {
	p := netip.MustParsePrefix
	return []entry{
		// IPv4 Special-Purpose Address Registry.
		{p("0.0.0.0/8"), Unspecified, "this network (RFC 791)", noEmbed},
		{p("0.0.0.0/32"), Unspecified, "this host on this network (RFC 1122)", noEmbed},
		{p("10.0.0.0/8"), Private, "private-use (RFC 1918)", noEmbed},
		{p("100.64.0.0/10"), Private, "shared address space (RFC 6598)", noEmbed},
		{p("127.0.0.0/8"), Loopback, "loopback (RFC 1122)", noEmbed},
		{p("169.254.0.0/16"), LinkLocal, "link local (RFC 3927)", noEmbed},
		{p("172.16.0.0/12"), Private, "private-use (RFC 1918)", noEmbed},
		{p("192.0.0.0/24"), Special, "IETF protocol assignments (RFC 6890)", noEmbed},
		{p("192.0.0.0/29"), Special, "IPv4 service continuity prefix (RFC 7335)", noEmbed},
		{p("192.0.0.8/32"), Special, "IPv4 dummy address (RFC 7600)", noEmbed},
		{p("192.0.0.9/32"), Special, "port control protocol anycast (RFC 7723)", noEmbed},
		{p("192.0.0.10/32"), Special, "traversal using relays around NAT anycast (RFC 8155)", noEmbed},
		{p("192.0.0.170/32"), Special, "NAT64/DNS64 discovery (RFC 8880)", noEmbed},
		{p("192.0.0.171/32"), Special, "NAT64/DNS64 discovery (RFC 8880)", noEmbed},
		{p("192.0.2.0/24"), Special, "documentation, TEST-NET-1 (RFC 5737)", noEmbed},
		{p("192.31.196.0/24"), Public, "AS112-v4 (RFC 7535)", noEmbed},
		{p("192.52.193.0/24"), Public, "AMT (RFC 7450)", noEmbed},
		{p("192.88.99.0/24"), Special, "deprecated 6to4 relay anycast (RFC 7526)", noEmbed},
		{p("192.168.0.0/16"), Private, "private-use (RFC 1918)", noEmbed},
		{p("192.175.48.0/24"), Public, "direct delegation AS112 service (RFC 7534)", noEmbed},
		{p("198.18.0.0/15"), Special, "benchmarking (RFC 2544)", noEmbed},
		{p("198.51.100.0/24"), Special, "documentation, TEST-NET-2 (RFC 5737)", noEmbed},
		{p("203.0.113.0/24"), Special, "documentation, TEST-NET-3 (RFC 5737)", noEmbed},
		{p("240.0.0.0/4"), Special, "reserved (RFC 1112)", noEmbed},
		{p("255.255.255.255/32"), Special, "limited broadcast (RFC 919)", noEmbed},
		// IPv4 multicast (IANA IPv4 Multicast Address Space Registry).
		{p("224.0.0.0/4"), Multicast, "multicast (RFC 5771)", noEmbed},
		{p("224.0.0.0/24"), LinkLocal, "local network control block (RFC 5771)", noEmbed},

		// IPv6 Special-Purpose Address Registry.
		{p("::1/128"), Loopback, "loopback address (RFC 4291)", noEmbed},
		{p("::/128"), Unspecified, "unspecified address (RFC 4291)", noEmbed},
		{p("::ffff:0:0/96"), Special, "IPv4-mapped address (RFC 4291)", embedLow32},
		{p("64:ff9b::/96"), Special, "IPv4-IPv6 translation (RFC 6052)", embedLow32},
		{p("64:ff9b:1::/48"), Special, "IPv4-IPv6 translation, local use (RFC 8215)", noEmbed},
		{p("100::/64"), Special, "discard-only address block (RFC 6666)", noEmbed},
		{p("100:0:0:1::/64"), Special, "dummy IPv6 prefix (RFC 9780)", noEmbed},
		{p("2001::/23"), Special, "IETF protocol assignments (RFC 2928)", noEmbed},
		{p("2001::/32"), Special, "Teredo (RFC 4380)", noEmbed},
		{p("2001:1::1/128"), Special, "port control protocol anycast (RFC 7723)", noEmbed},
		{p("2001:1::2/128"), Special, "traversal using relays around NAT anycast (RFC 8155)", noEmbed},
		{p("2001:1::3/128"), Special, "DNS-SD service registration protocol anycast (RFC 9665)", noEmbed},
		{p("2001:2::/48"), Special, "benchmarking (RFC 5180)", noEmbed},
		{p("2001:3::/32"), Public, "AMT (RFC 7450)", noEmbed},
		{p("2001:4:112::/48"), Public, "AS112-v6 (RFC 7535)", noEmbed},
		{p("2001:10::/28"), Special, "deprecated ORCHID (RFC 4843)", noEmbed},
		{p("2001:20::/28"), Public, "ORCHIDv2 (RFC 7343)", noEmbed},
		{p("2001:30::/28"), Public, "drone remote ID protocol entity tags (RFC 9374)", noEmbed},
		{p("2001:db8::/32"), Special, "documentation (RFC 3849)", noEmbed},
		{p("2002::/16"), Special, "6to4 (RFC 3056)", embed6to4},
		{p("2620:4f:8000::/48"), Public, "direct delegation AS112 service (RFC 7534)", noEmbed},
		{p("3fff::/20"), Special, "documentation (RFC 9637)", noEmbed},
		{p("5f00::/16"), Special, "segment routing (SRv6) SIDs (RFC 9602)", noEmbed},
		{p("fc00::/7"), Private, "unique-local (RFC 4193)", noEmbed},
		{p("fe80::/10"), LinkLocal, "link-local unicast (RFC 4291)", noEmbed},
		// IPv6 forms outside the registry.
		{p("::/96"), Special, "deprecated IPv4-compatible address (RFC 4291)", noEmbed},
		{p("fec0::/10"), Special, "deprecated site-local (RFC 3879)", noEmbed},
		{p("ff00::/8"), Multicast, "multicast (RFC 4291)", noEmbed},
		{p("ff02::/16"), LinkLocal, "link-local multicast (RFC 4291)", noEmbed},

		// Cloud metadata services outside link-local.
		{p("fd00:ec2::254/128"), Metadata, "AWS instance metadata over IPv6", noEmbed},
		{p("100.100.100.200/32"), Metadata, "Alibaba Cloud instance metadata", noEmbed},
		{p("169.254.169.254/32"), Metadata, "cloud instance metadata, link-local", noEmbed},
		{p("169.254.170.2/32"), Metadata, "AWS ECS task metadata, link-local", noEmbed},
	}
}()

// Classify returns a's class and what it is, in words. Zones are ignored;
// an IPv6 address embedding an IPv4 one is classified by the embedded
// address, named in the description.
func Classify(a netip.Addr) (Class, string) {
	if !a.IsValid() {
		return Invalid, "not an IP address"
	}
	a = a.WithZone("")
	if a.Is4In6() {
		c, what := Classify(a.Unmap())
		return c, "IPv4-mapped " + what
	}
	e, ok := lookup(a)
	if !ok {
		return Public, "globally reachable"
	}
	var v4 netip.Addr
	switch b := a.As16(); e.embed {
	case embedLow32:
		v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case embed6to4:
		v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	default:
		return e.class, e.name
	}
	c, what := Classify(v4)
	return c, fmt.Sprintf("%s of %s (%s)", e.name, v4, what)
}

func lookup(a netip.Addr) (entry, bool) {
	best, found := entry{}, false
	for _, e := range registry {
		if e.prefix.Addr().Is4() != a.Is4() || !e.prefix.Contains(a) {
			continue
		}
		if !found || e.prefix.Bits() > best.prefix.Bits() {
			best, found = e, true
		}
	}
	return best, found
}

// Check returns nil when an agent may be called at a, else an error that
// wraps ErrRefused and says what a is.
func Check(a netip.Addr) error {
	c, what := Classify(a)
	if c.Callable() {
		return nil
	}
	return fmt.Errorf("%w: %s is %s (%s)", ErrRefused, a, c, what)
}

// metadataNames are the names cloud providers resolve to their metadata
// service; refusing them when configured gives a clearer error than the
// connect-time refusal would.
func metadataName(host string) bool {
	switch strings.TrimSuffix(strings.ToLower(host), ".") {
	case "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal":
		return true
	}
	return false
}

// CheckHost checks a URL's host (without port, brackets removed) as
// configured: a literal address by Check, a metadata service's name is
// refused, any other name passes (it is checked when resolved: Resolve,
// Control).
func CheckHost(host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return Check(a)
	}
	if metadataName(host) {
		return fmt.Errorf("%w: host %q is a cloud metadata service", ErrRefused, host)
	}
	return nil
}

// Resolver is the part of *net.Resolver that Resolve needs.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Resolve checks host by CheckHost and, for a name, every address it
// resolves to now. A resolution error is returned as is (not ErrRefused).
func Resolve(ctx context.Context, res Resolver, host string) error {
	if err := CheckHost(host); err != nil {
		return err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := Check(a); err != nil {
			return fmt.Errorf("host %q resolves to %s: %w", host, a, err)
		}
	}
	return nil
}

// Control is a net.Dialer Control function: it runs after name resolution
// on the address the socket is about to connect to.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrRefused, address)
	}
	return Check(ap.Addr())
}

// Dialer returns a net.Dialer whose connections pass Control.
func Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: Control}
}

// Client returns a copy of base (nil: a new client) for calls to agents'
// addresses: redirects are refused, and without a transport of its own
// every connection passes Control at connect time, with no environment
// proxy (which would connect on our behalf).
func Client(base *http.Client) *http.Client {
	hc := http.Client{}
	if base != nil {
		hc = *base
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if hc.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.DialContext = Dialer(10 * time.Second).DialContext
		hc.Transport = t
	}
	return &hc
}
