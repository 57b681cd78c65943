package netguard

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want Class
	}{
		{"8.8.8.8", Public}, {"1.1.1.1", Public}, {"2606:4700::1111", Public}, {"192.31.196.1", Public}, {"2001:4:112::1", Public},
		{"127.0.0.1", Loopback}, {"127.9.9.9", Loopback}, {"::1", Loopback}, {"::ffff:127.0.0.1", Loopback},
		{"10.1.2.3", Private}, {"172.16.0.1", Private}, {"192.168.1.1", Private}, {"100.64.0.1", Private}, {"fd12::1", Private},
		{"169.254.0.1", LinkLocal}, {"fe80::1", LinkLocal}, {"fe80::1%eth0", LinkLocal}, {"ff02::1", LinkLocal}, {"224.0.0.251", LinkLocal},
		{"169.254.169.254", Metadata}, {"fd00:ec2::254", Metadata}, {"100.100.100.200", Metadata}, {"169.254.170.2", Metadata},
		{"0.0.0.0", Unspecified}, {"0.1.2.3", Unspecified}, {"::", Unspecified},
		{"239.1.1.1", Multicast}, {"ff0e::1", Multicast},
		{"192.0.0.1", Special}, {"192.0.0.9", Special}, {"192.0.0.170", Special}, {"192.0.0.192", Special},
		{"192.0.2.1", Special}, {"198.51.100.1", Special}, {"203.0.113.1", Special}, {"198.18.0.1", Special}, {"198.19.255.255", Special},
		{"240.0.0.1", Special}, {"255.255.255.255", Special}, {"192.88.99.1", Special},
		{"2001:db8::1", Special}, {"3fff::1", Special}, {"2001::1", Special}, {"2001:2::1", Special}, {"100::1", Special},
		{"64:ff9b:1::1", Special}, {"5f00::1", Special}, {"fec0::1", Special},
		// Embedded IPv4: judged by what they embed.
		{"::ffff:169.254.169.254", Metadata}, {"::ffff:a9fe:1", LinkLocal}, {"::ffff:10.0.0.1", Private}, {"::ffff:0.0.0.0", Unspecified},
		{"64:ff9b::a9fe:a9fe", Metadata}, {"64:ff9b::a9fe:1", LinkLocal}, {"64:ff9b::808:808", Public}, {"64:ff9b::c000:1", Special},
		{"2002:a9fe:a9fe::", Metadata}, {"2002:a9fe:1::1", LinkLocal}, {"2002:808:808::1", Public}, {"2002:c0a8:101::1", Private}, {"2002::", Unspecified},
		// Deprecated IPv4-compatible: refused whatever they embed.
		{"::a9fe:a9fe", Special}, {"::808:808", Special}, {"::127.0.0.1", Special},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		got, what := Classify(a)
		if got != tt.want {
			t.Errorf("Classify(%s) = %s (%s), want %s", tt.addr, got, what, tt.want)
		}
		if err := Check(a); (err == nil) != tt.want.Callable() || (err != nil && !errors.Is(err, ErrRefused)) {
			t.Errorf("Check(%s) = %v", tt.addr, err)
		}
	}
	if c, _ := Classify(netip.Addr{}); c != Invalid || Check(netip.Addr{}) == nil {
		t.Error("the zero Addr is not refused")
	}
}

type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestResolveAndControl(t *testing.T) {
	res := staticResolver{
		"lan.test":    {netip.MustParseAddr("10.0.0.5")},
		"rebind.test": {netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("2002:a9fe:a9fe::1")},
	}
	for host, want := range map[string]bool{"lan.test": true, "127.0.0.1": true, "::1": true,
		"rebind.test": false, "metadata.google.internal": false, "METADATA.": false, "0.0.0.0": false, "::a9fe:a9fe": false} {
		err := Resolve(context.Background(), res, host)
		if (err == nil) != want || (err != nil && !errors.Is(err, ErrRefused)) {
			t.Errorf("Resolve(%s) = %v, want ok=%v", host, err, want)
		}
	}
	if err := Resolve(context.Background(), res, "unknown.test"); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("an unresolvable name: %v", err)
	}
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "10.0.0.1:443": true,
		"169.254.169.254:80": false, "[::ffff:a9fe:a9fe]:80": false, "0.0.0.0:80": false, "[fe80::1%lo]:80": false, "garbage": false} {
		if err := Control("tcp", addr, nil); (err == nil) != want {
			t.Errorf("Control(%s) = %v, want ok=%v", addr, err, want)
		}
	}
}

// FuzzClassify: every address gets a class; Check refuses exactly the
// classes that are not callable; an IPv4 address and its IPv4-mapped form
// are classified alike; and nothing panics.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::a9fe:a9fe", "2002:a9fe:a9fe::", "64:ff9b::a9fe:a9fe", "fe80::1%eth0", "192.0.0.1", "::"} {
		a := netip.MustParseAddr(s).As16()
		f.Add(a[:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 16 && len(b) != 4 {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		c, what := Classify(a)
		if c == Invalid || what == "" {
			t.Fatalf("Classify(%s) = %s %q", a, c, what)
		}
		if err := Check(a); (err == nil) != c.Callable() {
			t.Fatalf("Check(%s) = %v for class %s", a, err, c)
		}
		if a.Is4() {
			if m, _ := Classify(netip.AddrFrom16(a.As16())); m != c {
				t.Fatalf("%s is %s, its IPv4-mapped form %s", a, c, m)
			}
		}
	})
}
