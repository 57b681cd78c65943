package roundtable

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestValidateRegistration(t *testing.T) {
	ok := Registration{Name: "security_analyst", Domain: "application security", BaseURL: "http://127.0.0.1:3001/",
		APIKey: "k-123", Capabilities: []string{"Security", "owasp", "security"}, Mode: ""}
	tests := []struct {
		name    string
		mutate  func(r *Registration)
		field   string // "" means valid
		blocked bool
	}{
		{"valid loopback", func(*Registration) {}, "", false},
		{"valid private https with path", func(r *Registration) { r.BaseURL = "https://192.168.1.20:8443/agents/sec" }, "", false},
		{"valid ipv6 loopback", func(r *Registration) { r.BaseURL = "http://[::1]:3001" }, "", false},
		{"valid name host", func(r *Registration) { r.BaseURL = "https://agent.example.com" }, "", false},
		{"no key is fine", func(r *Registration) { r.APIKey = "" }, "", false},
		{"missing name", func(r *Registration) { r.Name = " " }, "name", false},
		{"name with space", func(r *Registration) { r.Name = "my agent" }, "name", false},
		{"name non-ascii", func(r *Registration) { r.Name = "аgent" }, "name", false},
		{"missing domain", func(r *Registration) { r.Domain = "" }, "domain", false},
		{"missing base_url", func(r *Registration) { r.BaseURL = "" }, "base_url", false},
		{"ftp scheme", func(r *Registration) { r.BaseURL = "ftp://127.0.0.1/" }, "base_url", false},
		{"no scheme", func(r *Registration) { r.BaseURL = "127.0.0.1:3001" }, "base_url", false},
		{"credentials in url", func(r *Registration) { r.BaseURL = "http://u:p@127.0.0.1:3001" }, "base_url", false},
		{"query", func(r *Registration) { r.BaseURL = "http://127.0.0.1:3001/?x=1" }, "base_url", false},
		{"aws metadata", func(r *Registration) { r.BaseURL = "http://169.254.169.254/latest" }, "base_url", true},
		{"link-local v4", func(r *Registration) { r.BaseURL = "http://169.254.10.1:80" }, "base_url", true},
		{"aws metadata v6", func(r *Registration) { r.BaseURL = "http://[fd00:ec2::254]/" }, "base_url", true},
		{"link-local v6", func(r *Registration) { r.BaseURL = "http://[fe80::1]:3001" }, "base_url", true},
		{"mapped metadata", func(r *Registration) { r.BaseURL = "http://[::ffff:169.254.169.254]/" }, "base_url", true},
		{"nat64 metadata", func(r *Registration) { r.BaseURL = "http://[64:ff9b::a9fe:a9fe]/" }, "base_url", true},
		{"gcp metadata name", func(r *Registration) { r.BaseURL = "http://metadata.google.internal/" }, "base_url", true},
		{"key with newline", func(r *Registration) { r.APIKey = "abc\r\nX-Evil: 1" }, "api_key", false},
		{"empty capability", func(r *Registration) { r.Capabilities = []string{"ok", " "} }, "capabilities[1]", false},
		{"async mode", func(r *Registration) { r.Mode = "async" }, "mode", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			r.Capabilities = slices.Clone(ok.Capabilities)
			tt.mutate(&r)
			a, err := ValidateRegistration(r)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if a.Mode != ModeSync || strings.HasSuffix(a.BaseURL, "/") || a.Name != strings.TrimSpace(r.Name) {
					t.Errorf("not normalised: %+v", a)
				}
				return
			}
			var re *RegistrationError
			if !errors.As(err, &re) || !errors.Is(err, ErrInvalidRegistration) {
				t.Fatalf("err = %v, want *RegistrationError", err)
			}
			if !slices.ContainsFunc(re.Problems, func(p FieldProblem) bool { return p.Field == tt.field }) {
				t.Errorf("problems %+v lack field %s", re.Problems, tt.field)
			}
			if got := errors.Is(err, ErrBlockedAddress); got != tt.blocked {
				t.Errorf("errors.Is(ErrBlockedAddress) = %v, want %v", got, tt.blocked)
			}
		})
	}

	a, err := ValidateRegistration(ok)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"security", "owasp"}; !slices.Equal(a.Capabilities, want) || a.BaseURL != "http://127.0.0.1:3001" || a.APIKey != "k-123" {
		t.Errorf("normalised agent = %+v", a)
	}
}

func TestValidateRegistrationReportsAllProblems(t *testing.T) {
	_, err := ValidateRegistration(Registration{Name: "", Domain: "", BaseURL: "gopher://x", Mode: "weird"})
	var re *RegistrationError
	if !errors.As(err, &re) || len(re.Problems) != 4 {
		t.Fatalf("err = %v, want 4 problems", err)
	}
}

// staticResolver answers from a table; it stands in for DNS, which tests
// cannot control.
type staticResolver map[string][]netip.Addr

func (s staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestValidateRegistrationContextResolves(t *testing.T) {
	res := staticResolver{
		"agent.lan":   {netip.MustParseAddr("10.0.0.5")},
		"rebind.test": {netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("169.254.169.254")},
	}
	tests := []struct {
		url     string
		wantErr bool
		blocked bool
	}{
		{"http://agent.lan:3001", false, false},
		{"http://127.0.0.1:3001", false, false},
		{"http://rebind.test", true, true},
		{"http://unknown.test", true, false},
	}
	for _, tt := range tests {
		_, err := ValidateRegistrationContext(context.Background(), Registration{Name: "a", Domain: "d", BaseURL: tt.url}, res)
		if (err != nil) != tt.wantErr || errors.Is(err, ErrBlockedAddress) != tt.blocked {
			t.Errorf("%s: err = %v, want error %v blocked %v", tt.url, err, tt.wantErr, tt.blocked)
		}
	}
}

func TestBlockedAddr(t *testing.T) {
	tests := map[string]bool{
		"169.254.169.254": true, "169.254.0.1": true, "fe80::1": true, "fd00:ec2::254": true,
		"::ffff:169.254.169.254": true, "64:ff9b::a9fe:a9fe": true, "100.100.100.200": true,
		"127.0.0.1": false, "::1": false, "10.0.0.1": false, "192.168.1.1": false, "172.16.0.1": false,
		"fd00:ec2::253": false, "8.8.8.8": false, "100.100.100.100": false,
		// Through the one classifier (service/netguard): IANA special-purpose
		// blocks and embedded forms of refused addresses.
		"192.0.0.1": true, "192.0.0.192": true, "0.0.0.0": true, "::": true, "::a9fe:a9fe": true,
		"2002:a9fe:a9fe::": true, "64:ff9b::c0a8:1": false, "192.0.2.1": true, "255.255.255.255": true,
		"224.0.0.1": true, "2001:db8::1": true, "ff02::1": true, "64:ff9b::808:808": false, "2002:808:808::1": false,
	}
	for s, want := range tests {
		host := s
		if netip.MustParseAddr(s).Is6() {
			host = "[" + s + "]"
		}
		_, err := ValidateRegistration(Registration{Name: "a", Domain: "d", BaseURL: "http://" + host + ":3001"})
		if got := errors.Is(err, ErrBlockedAddress); got != want {
			t.Errorf("registration at %s: blocked = %v (%v), want %v", s, got, err, want)
		}
	}
}

func TestSafeClientRefusesAtDialTime(t *testing.T) {
	// The dial guard runs after resolution on the address being dialled;
	// these literals exercise it without needing a hostile DNS server.
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[::ffff:a9fe:a9fe]/"} {
		resp, err := NewSafeClient().Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: request succeeded", u)
		}
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: err = %v, want ErrBlockedAddress", u, err)
		}
	}
}

// Participants come back in registration order.
func TestSelectParticipants(t *testing.T) {
	reg := []Agent{
		{Name: "sec", Domain: "application security", Capabilities: []string{"owasp", "code_review"}},
		{Name: "db", Domain: "databases", Capabilities: []string{"postgres", "sql"}},
		{Name: "gen", Domain: "general"},
		{Name: "ux", Domain: "user experience design", Capabilities: []string{"accessibility"}},
		{Name: "perf", Domain: "performance"},
	}
	tests := []struct {
		task string
		want []string
	}{
		{"Review the authentication module for security vulnerabilities", []string{"sec", "gen"}},
		{"Is this SQL query safe on Postgres?", []string{"db", "gen"}},
		{"Please do a code review of main.go", []string{"sec", "gen"}},
		{"Check accessibility of the signup form", []string{"gen", "ux"}},
		{"Why does the page load slowly? Improve performance", []string{"gen", "perf"}},
		{"Is the database schema secure?", []string{"sec", "db", "gen"}},
		{"Write a poem", []string{"gen"}},
	}
	for _, tt := range tests {
		var got []string
		for _, a := range SelectParticipants(tt.task, reg) {
			got = append(got, a.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("SelectParticipants(%q) = %v, want %v", tt.task, got, tt.want)
		}
	}
	if got := SelectParticipants("anything", nil); len(got) != 0 {
		t.Errorf("no registered agents gave %v", got)
	}
}
