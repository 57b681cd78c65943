package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Effect is what a policy rule does to the calls it matches.
type Effect string

const (
	Allow Effect = "allow" // run without asking (never for a forbidden call)
	Ask   Effect = "ask"   // always prompt, even for a safe call
	Deny  Effect = "deny"  // never run
)

// strength orders effects: when several rules match, deny beats ask beats
// allow, whatever their order in the policy.
func (e Effect) strength() int {
	switch e {
	case Deny:
		return 2
	case Ask:
		return 1
	default:
		return 0
	}
}

// Rule is one user policy rule.
//
// Tool is a glob over the tool name ("*" for every tool). Args maps argument
// names to globs over their values: a string argument is matched as is, an
// array of strings (run_command's args) as its elements joined by single
// spaces, anything else as its compact JSON, and a missing argument as "".
// Every listed argument must match.
//
// Globs: "*" matches any run of characters, "/" included; "?" matches one
// character; "\" makes the next character literal. Matching is
// case-sensitive and covers the whole value.
type Rule struct {
	Tool string            `json:"tool"`
	Args map[string]string `json:"args,omitempty"`
	// Command, Workspace and Network make a command rule (commands.go):
	// run_command by program and argument prefix ("git diff *"), in one
	// workspace (empty: every one), the network allowed or not.
	Command   string `json:"command,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Network   bool   `json:"network,omitempty"`
	Action    Effect `json:"action"`
	// Untrusted: an allow rule that holds even when untrusted content is
	// in the conversation and the call would send data out (taint.go).
	// Never saved from a prompt; set on the Permissions page or by hand.
	Untrusted bool `json:"untrusted,omitempty"`
	// Note is said in the prompt of a call the rule makes ask ("this file
	// holds credentials").
	Note string `json:"note,omitempty"`
	// Origin is where the rule came from; nil for a rule written before
	// rules had one, or into policy.json by hand. Not part of what the rule
	// matches (sameRule ignores it).
	Origin *Origin `json:"origin,omitempty"`
}

// Origin kinds: the rule was saved by "Always allow" on a prompt, or added
// on the Permissions page.
const (
	OriginPrompt = "prompt"
	OriginPage   = "page"
)

// Origin says where a rule came from: which conversation's prompt (its id
// and the title the window showed then) or the Permissions page, and when.
type Origin struct {
	Kind      string    `json:"kind"`
	SessionID string    `json:"session_id,omitempty"`
	Chat      string    `json:"chat,omitempty"`
	At        time.Time `json:"at"`
}

// String renders r for reasons and logs, e.g. `deny run_command {program=rm}`.
func (r Rule) String() string {
	s := string(r.Action) + " " + r.Tool
	if r.Command != "" {
		s = string(r.Action) + " command " + r.Command
		if r.Network {
			s += " (with network)"
		}
		if r.Workspace != "" {
			s += " in " + r.Workspace
		}
	}
	if len(r.Args) > 0 {
		keys := make([]string, 0, len(r.Args))
		for k := range r.Args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + r.Args[k]
		}
		s += " {" + strings.Join(parts, ", ") + "}"
	}
	if r.Untrusted {
		s += " (also with untrusted content)"
	}
	return s
}

// Validate reports a rule that could not be applied as written.
func (r Rule) Validate() error {
	switch r.Action {
	case Allow, Ask, Deny:
	default:
		return fmt.Errorf("gate: rule %q: action must be allow, ask or deny", r.String())
	}
	if r.Tool == "" {
		return fmt.Errorf("gate: rule %q: tool is empty (use \"*\" for every tool)", r.String())
	}
	if err := checkGlob(r.Tool); err != nil {
		return fmt.Errorf("gate: rule %q: %w", r.String(), err)
	}
	if err := r.validateCommand(); err != nil {
		return fmt.Errorf("gate: rule %q: %w", r.String(), err)
	}
	for k, g := range r.Args {
		if k == "" {
			return fmt.Errorf("gate: rule %q: empty argument name", r.String())
		}
		if err := checkGlob(g); err != nil {
			return fmt.Errorf("gate: rule %q: %w", r.String(), err)
		}
	}
	return nil
}

func (r Rule) matches(tool string, args map[string]json.RawMessage, workspace string) bool {
	if !globMatch(r.Tool, tool) {
		return false
	}
	if r.Workspace != "" && r.Workspace != workspace {
		return false
	}
	if r.Command != "" && !r.matchesCommand(args) {
		return false
	}
	if tool == commandTool && r.Action == Allow && !r.Network && callNetwork(args) {
		return false // a command asking for the network needs a rule that gives it
	}
	for k, g := range r.Args {
		if !globMatch(g, argValue(args, k)) {
			return false
		}
	}
	return true
}

// argValue renders one argument for matching; see Rule.
func argValue(args map[string]json.RawMessage, key string) string {
	raw, ok := args[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " ")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// Policy is the user's ordered list of rules.
type Policy struct {
	Rules []Rule `json:"rules"`
	// Defaults is the version of the default rules (credentials.go) the
	// policy has had; those added later are added at its next load.
	Defaults int `json:"defaults,omitempty"`
}

// Validate checks every rule.
func (p Policy) Validate() error {
	var errs []error
	for _, r := range p.Rules {
		errs = append(errs, r.Validate())
	}
	return errors.Join(errs...)
}

// match returns the strongest matching rule (the first of equal strength),
// or nil.
func (p Policy) match(tool string, args map[string]json.RawMessage, workspace string) *Rule {
	var best *Rule
	for i := range p.Rules {
		r := &p.Rules[i]
		// Among rules as strong, one that holds with untrusted content wins.
		if r.matches(tool, args, workspace) && (best == nil || r.Action.strength() > best.Action.strength() ||
			(r.Action == best.Action && r.Untrusted && !best.Untrusted)) {
			best = r
		}
	}
	if best == nil {
		return nil
	}
	c := *best
	return &c
}

func (p Policy) clone() Policy {
	c := Policy{Rules: make([]Rule, len(p.Rules)), Defaults: p.Defaults}
	for i, r := range p.Rules {
		c.Rules[i] = r
		if r.Args != nil {
			c.Rules[i].Args = make(map[string]string, len(r.Args))
			for k, v := range r.Args {
				c.Rules[i].Args[k] = v
			}
		}
	}
	return c
}

// LoadPolicy reads a policy file written by SavePolicy. A missing file is
// the default rules alone (credentials.go), which a file gets too.
func LoadPolicy(path string) (Policy, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return WithDefaults(Policy{}), nil
	}
	if err != nil {
		return Policy{}, fmt.Errorf("gate: %w", err)
	}
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("gate: policy %s: %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return WithDefaults(p), nil
}

// SavePolicy writes p to path atomically, readable by the user only.
func SavePolicy(path string, p Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.Rules == nil {
		p.Rules = []Rule{}
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".policy-*")
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if err := errors.Join(werr, f.Chmod(0o600), f.Close()); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("gate: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("gate: %w", err)
	}
	return nil
}

// checkGlob rejects a pattern ending in a lone escape.
func checkGlob(pattern string) error {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '\\' {
			if i == len(pattern)-1 {
				return fmt.Errorf("glob %q ends in \\", pattern)
			}
			i++
		}
	}
	return nil
}

// globMatch reports whether s matches the whole pattern; see Rule.
func globMatch(pattern, s string) bool {
	// Iterative matching with one backtrack point for the last '*': linear
	// enough for policy-sized patterns, and no recursion on hostile input.
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starI = p, i
				p++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[i:])
				p++
				i += n
				continue
			case '\\':
				if p+1 < len(pattern) && pattern[p+1] == s[i] {
					p += 2
					i++
					continue
				}
			default:
				if c == s[i] {
					p++
					i++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' swallow one more character and retry.
		_, n := utf8.DecodeRuneInString(s[starI:])
		starI += n
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// escapeGlob quotes s so that it matches only itself.
func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)
	return r.Replace(s)
}
