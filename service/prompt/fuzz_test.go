package prompt

import (
	"path"
	"strings"
	"testing"

	"jarvis/service/config"
)

// FuzzMatchGlob: the glob matcher of tool scoping never panics, agrees with
// path.Match, matches a pattern without metacharacters only to itself, and
// "*" matches every name without a slash.
func FuzzMatchGlob(f *testing.F) {
	for _, s := range [][2]string{{"reading_list_*", "reading_list_add"}, {"lists.*", "lists.get"}, {"[", "["}, {"a[", "a"}, {"\\", "\\"},
		{"*", "run_command"}, {"[^a]*", "b"}, {"?x", "yx"}, {"write_*", "write_file"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := matchGlob(pattern, name)
		want, err := path.Match(pattern, name)
		if got != (err == nil && want) {
			t.Fatalf("matchGlob(%q, %q) = %v, path.Match %v %v", pattern, name, got, want, err)
		}
		if !strings.ContainsAny(name, `*?[\`) && !matchGlob(name, name) {
			t.Fatalf("a literal name %q does not match itself", name)
		}
		if !strings.ContainsAny(pattern, `*?[\`) && got != (pattern == name) {
			t.Fatalf("literal pattern %q vs %q: %v", pattern, name, got)
		}
		if !strings.Contains(name, "/") && !matchGlob("*", name) {
			t.Fatalf("* does not match %q", name)
		}
	})
}

// FuzzToolInScope: scoping is a security boundary. A tool named exactly in
// the denylist is never in scope (system_ tools excepted); with an allowlist,
// a tool outside it is never in scope; a capability named in the capability
// denylist always takes the tool out.
func FuzzToolInScope(f *testing.F) {
	f.Add("write_file", "read_*", "write_*", "fs.write", "fs.*")
	f.Add("memory_search", "*", "", "", "")
	f.Add("system_x", "", "system_x", "", "")
	f.Add("run_command", "run_*", "", "shell", "shell")
	f.Fuzz(func(t *testing.T, name, allow, deny, capability, capDeny string) {
		a := config.Agent{AgentID: "fuzz"}
		if allow != "" {
			a.ToolAllowlist = []string{allow}
		}
		if deny != "" {
			a.ToolDenylist = []string{deny}
		}
		if capDeny != "" {
			a.CapabilityDenylist = []string{capDeny}
		}
		var caps []string
		if capability != "" {
			caps = []string{capability}
		}
		in := ToolInScope(a, name, caps)
		if strings.HasPrefix(name, "system_") {
			return
		}
		if deny != "" && matchGlob(deny, name) && in {
			t.Fatalf("%q is in scope despite deny %q", name, deny)
		}
		if allow != "" && !matchGlob(allow, name) && in {
			t.Fatalf("%q is in scope outside allow %q", name, allow)
		}
		if capability != "" && capDeny != "" && matchGlob(capDeny, capability) && in {
			t.Fatalf("%q with capability %q is in scope despite capability deny %q", name, capability, capDeny)
		}
		if allow == "" && deny == "" && capDeny == "" && !in {
			t.Fatalf("%q refused with no list at all", name)
		}
	})
}
