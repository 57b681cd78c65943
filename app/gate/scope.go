package gate

// The scope of an "always allow" rule and the edits of the Permissions
// page. A rule saved from a prompt covers the call's canonical target (this
// file, this program, this app, this address), not every call of the tool;
// the prompt lists the wider scopes the user may pick on purpose, and the
// rule to be saved is shown before it is.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
)

// Scope is one rule "always allow" may save, with its plain-word label.
type Scope struct {
	Label string `json:"label"`
	Rule  Rule   `json:"rule"`
}

// ErrRuleChanged: the rule at that place is not the one the caller saw.
var ErrRuleChanged = errors.New("gate: the rule changed meanwhile; reload the list")

// alwaysScopes returns the rules "always allow" offers for a call in its
// canonical form, narrowest first.
func alwaysScopes(tool string, args map[string]json.RawMessage, workspace string) []Scope {
	with := func(key, glob string) Rule {
		return Rule{Tool: escapeGlob(tool), Args: map[string]string{key: glob}, Action: Allow}
	}
	everywhere := Rule{Tool: escapeGlob(tool), Action: Allow}
	switch tool {
	case "write_file", "edit_file", "read_file", "list_dir", "open_path", "make_dir", "delete_path", "search_files":
		p := argValue(args, "path")
		noun := map[string]string{"write_file": "file", "edit_file": "file", "read_file": "file", "list_dir": "folder", "open_path": "file or folder",
			"make_dir": "folder", "delete_path": "file or folder", "search_files": "folder"}[tool]
		out := []Scope{{Label: fmt.Sprintf("only the %s %s", noun, p), Rule: with("path", escapeGlob(p))}}
		if dir := path.Dir(p); dir != "." && dir != "/" && dir != p {
			out = append(out, Scope{Label: fmt.Sprintf("any %s in the folder %s and its subfolders", noun, dir), Rule: with("path", escapeGlob(dir)+"/*")})
		}
		return append(out, Scope{Label: fmt.Sprintf("any %s anywhere in the workspace", noun), Rule: everywhere})
	case "move_path":
		from, to := argValue(args, "from"), argValue(args, "to")
		return []Scope{
			{Label: fmt.Sprintf("only moving %s to %s", from, to), Rule: Rule{Tool: escapeGlob(tool), Args: map[string]string{"from": escapeGlob(from), "to": escapeGlob(to)}, Action: Allow}},
			{Label: "any move anywhere in the workspace", Rule: everywhere},
		}
	case "open_url":
		u := argValue(args, "url")
		out := []Scope{{Label: "only the address " + u, Rule: with("url", escapeGlob(u))}}
		if p, err := url.Parse(u); err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
			site := p.Scheme + "://" + p.Host + "/"
			out = append(out, Scope{Label: "any page on " + p.Host, Rule: with("url", escapeGlob(site)+"*")})
		}
		return out
	case "run_command":
		return commandScopes(args, workspace)
	case "open_app":
		return []Scope{{Label: "the app " + argValue(args, "app_id"), Rule: grantRule(tool, args)}}
	case "agents_message":
		return []Scope{{Label: "messages to the agent " + argValue(args, "agentId"), Rule: grantRule(tool, args)}}
	case "mcp_sampling":
		return []Scope{{Label: "requests for a completion from the MCP server " + argValue(args, "server"), Rule: grantRule(tool, args)}}
	}
	return []Scope{{Label: "every " + tool + " call", Rule: everywhere}}
}

// pickScope is the rule of scopes[i], or of the narrowest when i was not offered.
func pickScope(scopes []Scope, i int) Rule {
	if i < 0 || i >= len(scopes) {
		i = 0
	}
	return scopes[i].Rule
}

// AddRule appends rule to the policy (the Permissions page's "add") and
// saves it.
func (g *Gate) AddRule(rule Rule) error {
	if err := rule.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.policy.clone()
	next.Rules = append(next.Rules, rule)
	if g.save != nil {
		if err := g.save(next.clone()); err != nil {
			return fmt.Errorf("gate: saving the policy: %w", err)
		}
	}
	g.policy = next
	return nil
}

// RemoveRule revokes the policy's rule at index i, which must still be seen
// (the rule the caller listed), and saves the policy.
func (g *Gate) RemoveRule(i int, seen Rule) error {
	return g.editRules(i, seen, func(rules []Rule) []Rule { return append(rules[:i:i], rules[i+1:]...) })
}

// ReplaceRule puts next in place of the rule at index i, which must still be
// seen, and saves the policy.
func (g *Gate) ReplaceRule(i int, seen, next Rule) error {
	if err := next.Validate(); err != nil {
		return err
	}
	return g.editRules(i, seen, func(rules []Rule) []Rule {
		out := append([]Rule(nil), rules...)
		out[i] = next
		return out
	})
}

// editRules saves the edited policy first and applies it only once saved,
// so a failed save changes nothing.
func (g *Gate) editRules(i int, seen Rule, edit func([]Rule) []Rule) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i < 0 || i >= len(g.policy.Rules) || !sameRule(g.policy.Rules[i], seen) {
		return ErrRuleChanged
	}
	next := Policy{Rules: edit(g.policy.clone().Rules), Defaults: g.policy.Defaults}
	if g.save != nil {
		if err := g.save(next.clone()); err != nil {
			return fmt.Errorf("gate: saving the policy: %w", err)
		}
	}
	g.policy = next
	return nil
}

func sameRule(a, b Rule) bool {
	if a.Tool != b.Tool || a.Action != b.Action || a.Note != b.Note || a.Untrusted != b.Untrusted || len(a.Args) != len(b.Args) ||
		a.Command != b.Command || a.Workspace != b.Workspace || a.Network != b.Network {
		return false
	}
	for k, v := range a.Args {
		if w, ok := b.Args[k]; !ok || w != v {
			return false
		}
	}
	return true
}
