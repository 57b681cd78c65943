package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"read_file", "read_file", true},
		{"read_file", "read_files", false},
		{"read_*", "read_file", true},
		{"*_file", "write_file", true},
		{"clipboard_*", "clipboard_read", true},
		{"clipboard_*", "notify", false},
		{"*.env", "config/.env", true},
		{"*.env", "config/.env.bak", false},
		{"https://example.com/*", "https://example.com/a/b?c", true},
		{"https://example.com/*", "https://example.com.evil/x", false},
		{"a?c", "abc", true},
		{"a?c", "aéc", true},
		{"a?c", "ac", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{`a\?`, "a?", true},
		{`a\?`, "ab", false},
		{`\\`, `\`, true},
		{"status*", "status -s", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tc := range tests {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
	for _, s := range []string{"plain", "a*b", `back\slash`, "q?", "***"} {
		if !globMatch(escapeGlob(s), s) {
			t.Errorf("escaped %q does not match itself", s)
		}
		if s != "plain" && globMatch(escapeGlob(s), s+"x") {
			t.Errorf("escaped %q matches more", s)
		}
	}
}

func TestRuleArgs(t *testing.T) {
	args := map[string]json.RawMessage{
		"program": json.RawMessage(`"git"`),
		"args":    json.RawMessage(`["status", "-s"]`),
		"n":       json.RawMessage(`{ "a" : 1 }`),
	}
	tests := []struct {
		rule Rule
		want bool
	}{
		{Rule{Tool: "run_command", Action: Allow}, true},
		{Rule{Tool: "run_*", Args: map[string]string{"program": "git"}, Action: Allow}, true},
		{Rule{Tool: "run_command", Args: map[string]string{"program": "gi"}, Action: Allow}, false},
		{Rule{Tool: "run_command", Args: map[string]string{"args": "status*"}, Action: Allow}, true},
		{Rule{Tool: "run_command", Args: map[string]string{"args": "status -s"}, Action: Allow}, true},
		{Rule{Tool: "run_command", Args: map[string]string{"args": "push*"}, Action: Allow}, false},
		{Rule{Tool: "run_command", Args: map[string]string{"program": "git", "args": "push*"}, Action: Allow}, false},
		{Rule{Tool: "run_command", Args: map[string]string{"n": `{"a":1}`}, Action: Allow}, true},
		{Rule{Tool: "run_command", Args: map[string]string{"cwd": ""}, Action: Allow}, true},
		{Rule{Tool: "run_command", Args: map[string]string{"cwd": "?*"}, Action: Allow}, false},
		{Rule{Tool: "read_file", Action: Allow}, false},
	}
	for _, tc := range tests {
		if got := tc.rule.matches("run_command", args, ""); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func TestPolicyStrongestRuleWins(t *testing.T) {
	allow := Rule{Tool: "*", Action: Allow}
	ask := Rule{Tool: "write_*", Action: Ask}
	deny := Rule{Tool: "write_file", Args: map[string]string{"path": "*.env"}, Action: Deny}
	env := map[string]json.RawMessage{"path": json.RawMessage(`"a/.env"`)}
	txt := map[string]json.RawMessage{"path": json.RawMessage(`"a.txt"`)}
	for _, order := range [][]Rule{{allow, ask, deny}, {deny, ask, allow}, {ask, deny, allow}} {
		p := Policy{Rules: order}
		if r := p.match("write_file", env, ""); r == nil || r.Action != Deny {
			t.Fatalf("%v: .env got %v", order, r)
		}
		if r := p.match("write_file", txt, ""); r == nil || r.Action != Ask {
			t.Fatalf("%v: .txt got %v", order, r)
		}
		if r := p.match("read_file", txt, ""); r == nil || r.Action != Allow {
			t.Fatalf("%v: read got %v", order, r)
		}
	}
	if r := (Policy{}).match("read_file", txt, ""); r != nil {
		t.Fatalf("empty policy matched %v", r)
	}
}

func TestRuleValidate(t *testing.T) {
	for _, r := range []Rule{
		{Tool: "x", Action: "maybe"},
		{Tool: "", Action: Allow},
		{Tool: `x\`, Action: Deny},
		{Tool: "x", Args: map[string]string{"path": `a\`}, Action: Deny},
		{Tool: "x", Args: map[string]string{"": "a"}, Action: Deny},
	} {
		if r.Validate() == nil {
			t.Errorf("%+v validated", r)
		}
	}
	if err := (Rule{Tool: "*", Args: map[string]string{"path": `\*`}, Action: Ask}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestPolicyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "policy.json")
	p, err := LoadPolicy(path)
	if err != nil || !reflect.DeepEqual(p.Rules, CredentialRules()) {
		t.Fatalf("missing file: %+v, %v; want the default rules alone", p, err)
	}
	want := Policy{Rules: []Rule{
		{Tool: "run_command", Args: map[string]string{"program": "git"}, Action: Allow},
		{Tool: "*", Args: map[string]string{"path": "*.env"}, Action: Deny},
	}, Defaults: defaultsVersion}
	if err := SavePolicy(path, want); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	got, err := LoadPolicy(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := SavePolicy(path, Policy{Rules: []Rule{{Tool: "x", Action: "yes"}}}); err == nil {
		t.Fatal("saved an invalid policy")
	}
	os.WriteFile(path, []byte(`{"rules":[{"tool":"x","action":"allow","extra":1}]}`), 0o600)
	if _, err := LoadPolicy(path); err == nil {
		t.Fatal("loaded a policy with an unknown field")
	}
	os.WriteFile(path, []byte(`{"rules":[{"tool":"x","action":"always"}]}`), 0o600)
	if _, err := LoadPolicy(path); err == nil {
		t.Fatal("loaded an invalid rule")
	}
}
