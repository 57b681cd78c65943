package roundtable

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"jarvis/service/netguard"
)

// Agent is a registered round-table participant. Name is its identity in
// every result: what an agent says its name is in a response never
// overrides it.
type Agent struct {
	Name         string   `json:"name"`
	Domain       string   `json:"domain"`
	BaseURL      string   `json:"base_url"`
	APIKey       string   `json:"-"` // a secret: never serialised, never logged
	Capabilities []string `json:"capabilities"`
	Mode         string   `json:"mode"`
	// Timeout bounds each call to this agent; 0 means the engine's
	// CallTimeout. Agents are waited for independently: one agent's
	// timeout never changes how long another is waited for.
	Timeout time.Duration `json:"-"`
}

// Registration is the body of POST /api/v1/agents (docs/protocols/roundtable-agents.md).
type Registration struct {
	Name         string   `json:"name"`
	Domain       string   `json:"domain"`
	BaseURL      string   `json:"base_url"`
	APIKey       string   `json:"api_key"`
	Capabilities []string `json:"capabilities"`
	Mode         string   `json:"mode"`
}

// Registration limits. Names are identifiers that other agents quote back in
// target_agent, so they are kept short and plain.
const (
	maxNameLen       = 64
	maxDomainLen     = 200
	maxCapabilities  = 50
	maxCapabilityLen = 100
	maxAPIKeyLen     = 4096
	maxBaseURLLen    = 2048
	// ModeSync is the only mode the engine implements: each call is answered
	// in its HTTP response.
	ModeSync = "sync"
)

// ValidateRegistration checks a registration without touching the network
// and returns the normalised Agent: trimmed fields, base URL without a
// trailing slash, capabilities lower-cased and de-duplicated, mode "sync"
// when empty. Every problem is reported in a *RegistrationError (matching
// ErrInvalidRegistration, and ErrBlockedAddress for a refused address).
//
// A base URL whose host is a name is accepted here; the dial-time guard of
// NewSafeClient refuses it if it resolves to a blocked address. Use
// ValidateRegistrationContext to also resolve it now.
func ValidateRegistration(r Registration) (Agent, error) {
	var e RegistrationError
	add := func(field, format string, args ...any) {
		e.Problems = append(e.Problems, FieldProblem{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	a := Agent{
		Name:   strings.TrimSpace(r.Name),
		Domain: strings.TrimSpace(r.Domain),
		APIKey: r.APIKey,
		Mode:   strings.ToLower(strings.TrimSpace(r.Mode)),
	}

	switch {
	case a.Name == "":
		add("name", "is required")
	case len(a.Name) > maxNameLen:
		add("name", "is longer than %d characters", maxNameLen)
	case strings.IndexFunc(a.Name, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'))
	}) >= 0:
		add("name", "may contain only ASCII letters, digits, '_', '-' and '.'")
	}

	switch {
	case a.Domain == "":
		add("domain", "is required")
	case utf8.RuneCountInString(a.Domain) > maxDomainLen:
		add("domain", "is longer than %d characters", maxDomainLen)
	case !utf8.ValidString(a.Domain) || hasControl(a.Domain):
		add("domain", "contains control characters or invalid UTF-8")
	}

	base, blocked, problem := checkBaseURL(r.BaseURL)
	if problem != "" {
		add("base_url", "%s", problem)
		e.blocked = blocked
	}
	a.BaseURL = base

	if len(a.APIKey) > maxAPIKeyLen {
		add("api_key", "is longer than %d bytes", maxAPIKeyLen)
	} else if strings.IndexFunc(a.APIKey, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		// The key travels in a header: anything outside visible ASCII could
		// split or corrupt it.
		add("api_key", "may contain only visible ASCII characters")
	}

	if len(r.Capabilities) > maxCapabilities {
		add("capabilities", "has more than %d entries", maxCapabilities)
	}
	for i, c := range r.Capabilities {
		c = strings.ToLower(strings.TrimSpace(c))
		switch {
		case c == "":
			add(fmt.Sprintf("capabilities[%d]", i), "is empty")
		case utf8.RuneCountInString(c) > maxCapabilityLen:
			add(fmt.Sprintf("capabilities[%d]", i), "is longer than %d characters", maxCapabilityLen)
		case !utf8.ValidString(c) || hasControl(c):
			add(fmt.Sprintf("capabilities[%d]", i), "contains control characters or invalid UTF-8")
		case !slices.Contains(a.Capabilities, c):
			a.Capabilities = append(a.Capabilities, c)
		}
	}

	if a.Mode == "" {
		a.Mode = ModeSync
	}
	if a.Mode != ModeSync {
		add("mode", "%q is not supported (only %q)", r.Mode, ModeSync)
	}

	if len(e.Problems) > 0 {
		return Agent{}, &e
	}
	return a, nil
}

// ValidateRegistrationContext is ValidateRegistration plus a DNS lookup of a
// base URL given by host name: the registration is refused when the name
// does not resolve or when any of its addresses is blocked. Pass
// net.DefaultResolver in production.
func ValidateRegistrationContext(ctx context.Context, r Registration, res Resolver) (Agent, error) {
	a, err := ValidateRegistration(r)
	if err != nil {
		return a, err
	}
	u, _ := url.Parse(a.BaseURL) // already validated
	host := u.Hostname()
	if err := netguard.Resolve(ctx, res, host); err != nil {
		if errors.Is(err, netguard.ErrRefused) {
			return Agent{}, &RegistrationError{blocked: true, Problems: []FieldProblem{{Field: "base_url", Problem: err.Error()}}}
		}
		return Agent{}, &RegistrationError{Problems: []FieldProblem{{Field: "base_url", Problem: fmt.Sprintf("host %q does not resolve: %v", host, err)}}}
	}
	return a, nil
}

// checkBaseURL returns the normalised base URL, or a problem and whether the
// problem is a refused address.
func checkBaseURL(raw string) (base string, blocked bool, problem string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false, "is required"
	}
	if len(raw) > maxBaseURLLen {
		return "", false, fmt.Sprintf("is longer than %d bytes", maxBaseURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, "is not a valid URL"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, "must use http or https"
	case u.Host == "" || u.Hostname() == "":
		return "", false, "has no host"
	case u.User != nil:
		return "", false, "must not contain credentials (use api_key)"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		// Endpoint paths are appended to the base URL.
		return "", false, "must not contain a query or fragment"
	}
	if err := netguard.CheckHost(u.Hostname()); err != nil {
		return "", true, err.Error()
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), false, ""
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// generalDomains are domains whose agents take part in every round table.
func generalDomain(d string) bool {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "general", "generalist", "any", "all", "*":
		return true
	}
	return false
}

func stopWord(w string) bool {
	switch w {
	case "and", "the", "for", "with", "from", "into", "this", "that", "are", "our", "your", "its",
		"all", "any", "not", "but", "can", "you", "about", "over", "what", "how", "why", "who",
		"does", "should", "will", "would":
		return true
	}
	return false
}

// SelectParticipants returns, in registration order, the registered agents
// relevant to the task: those whose domain is general ("general", "any",
// "*"), or one of whose capabilities or domain words appears in the task.
// Words match loosely so that "security" finds "secure" and
// "vulnerability" finds "vulnerabilities". Capabilities written with '_',
// '-' or '.' ("code_review") match as phrases. The result may be empty;
// the caller decides whether that is an error.
func SelectParticipants(task string, registered []Agent) []Agent {
	taskWords := words(task)
	var out []Agent
	for _, a := range registered {
		if agentMatches(a, taskWords) {
			out = append(out, a)
		}
	}
	return out
}

func agentMatches(a Agent, taskWords []string) bool {
	if generalDomain(a.Domain) {
		return true
	}
	for _, c := range a.Capabilities {
		if generalDomain(c) {
			return true
		}
		if phrase := words(c); len(phrase) > 0 && containsPhrase(taskWords, phrase) {
			return true
		}
	}
	for _, w := range words(a.Domain) {
		if len(w) < 3 || stopWord(w) {
			continue
		}
		if slices.ContainsFunc(taskWords, func(t string) bool { return wordsMatch(w, t) }) {
			return true
		}
	}
	return false
}

// containsPhrase reports whether phrase occurs as consecutive words of text.
func containsPhrase(text, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(text); i++ {
		ok := true
		for j, p := range phrase {
			if !wordsMatch(p, text[i+j]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// wordsMatch is a deliberately small stand-in for stemming: equal words, a
// whole short word that prefixes a longer one ("test"/"testing"), or a
// shared prefix covering most of the shorter word ("secure"/"security").
func wordsMatch(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	cp := 0
	for cp < len(a) && a[cp] == b[cp] {
		cp++
	}
	if cp == len(a) && cp >= 4 {
		return true
	}
	return cp >= 5 && cp*4 >= len(a)*3
}

// words splits s into lower-case letter/digit runs.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
