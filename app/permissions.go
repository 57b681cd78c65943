package app

// The Permissions page's bindings: the gate's policy rules (the "always
// allow" rules saved from prompts and any written by hand) listed with the
// workspace they apply to, revoked or edited one at a time, and the prompt
// answer that picks the scope of an "always allow" rule.

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"jarvis/app/gate"
	"jarvis/tools"
)

// policyEditor is the part of the Runner the Permissions page uses.
type policyEditor interface {
	Policy() gate.Policy
	AddRule(next gate.Rule) error
	RemoveRule(i int, seen gate.Rule) error
	ReplaceRule(i int, seen, next gate.Rule) error
	Workspace() string
	Grants() map[string][]gate.Rule
	KnownTools() []KnownTool
}

// KnownTool is a tool the Permissions page's "Add rule" offers.
type KnownTool struct {
	Name string `json:"name"`
	// Title is its name for people when Name is not one (an MCP tool).
	Title string `json:"title,omitempty"`
}

// KnownTools lists the tools a rule can name: the OS tools, the service
// tools the gate judges, and the enabled tools of the MCP servers.
func (r *Runner) KnownTools() []KnownTool {
	var out []KnownTool
	for _, d := range append(tools.Definitions(), tools.ServiceDefinitions()...) {
		out = append(out, KnownTool{Name: d.Name, Title: d.Title})
	}
	if r.mcp != nil {
		for _, t := range r.mcp.Catalogue() {
			d, _ := r.mcp.Definition(t.Name)
			out = append(out, KnownTool{Name: t.Name, Title: d.Title})
		}
	}
	return out
}

// Grants returns the "allow for this session" grants (gate.Gate.Grants).
func (r *Runner) Grants() map[string][]gate.Rule { return r.gate.Grants() }

// Grant is an "allow for this session" grant of one conversation.
type Grant struct {
	SessionID string    `json:"session_id"`
	Rule      gate.Rule `json:"rule"`
}

// Policy returns a copy of the gate's policy.
func (r *Runner) Policy() gate.Policy { return r.gate.Policy() }

// AddRule appends a rule (gate.Gate.AddRule).
func (r *Runner) AddRule(next gate.Rule) error { return r.gate.AddRule(next) }

// RemoveRule revokes rule i (gate.Gate.RemoveRule).
func (r *Runner) RemoveRule(i int, seen gate.Rule) error { return r.gate.RemoveRule(i, seen) }

// ReplaceRule edits rule i (gate.Gate.ReplaceRule).
func (r *Runner) ReplaceRule(i int, seen, next gate.Rule) error {
	return r.gate.ReplaceRule(i, seen, next)
}

// Permissions is what the Permissions page shows.
type Permissions struct {
	// Workspace is the folder the file tools are confined to; rule paths are relative to it.
	Workspace string      `json:"workspace"`
	Rules     []gate.Rule `json:"rules"`
	// DefaultCommands is the read-only set of commands that runs with no
	// prompt when no rule decides (gate.DefaultCommands); shown, not edited.
	DefaultCommands []gate.Rule `json:"default_commands"`
	// Sandbox is how the programs Jarvis starts run here, each protection
	// and whether it holds (tools.Sandbox.Protections).
	Sandbox []tools.Protection `json:"sandbox"`
	// Grants are the "allow for this session" grants of the conversations
	// open since the window started (forgotten when it closes).
	Grants []Grant `json:"grants"`
	// Tools are the tools "Add rule" offers (KnownTools).
	Tools []KnownTool `json:"tools"`
}

var errNoPolicy = errors.New("tool calls are not enabled in this window, so there are no permission rules")

func (a *App) policy() (policyEditor, error) {
	if p, ok := a.tools.(policyEditor); ok {
		return p, nil
	}
	return nil, errNoPolicy
}

// PermissionRules lists every rule of the policy, in order.
func (a *App) PermissionRules() (Permissions, error) {
	p, err := a.policy()
	if err != nil {
		return Permissions{Rules: []gate.Rule{}}, err
	}
	rules := p.Policy().Rules
	if rules == nil {
		rules = []gate.Rule{}
	}
	perms := Permissions{Workspace: p.Workspace(), Rules: rules, DefaultCommands: gate.DefaultCommands, Sandbox: []tools.Protection{}, Grants: []Grant{}}
	perms.Tools = p.KnownTools()
	grants := p.Grants()
	for _, id := range slices.Sorted(maps.Keys(grants)) {
		for _, r := range grants[id] {
			perms.Grants = append(perms.Grants, Grant{SessionID: id, Rule: r})
		}
	}
	if s, ok := p.(interface{ Sandbox() tools.Sandbox }); ok {
		perms.Sandbox = s.Sandbox().Protections()
	}
	return perms, nil
}

// AddRule adds a rule to the policy: on the Permissions page, a command
// rule (program and argument prefix, "npm run *") or any other. A rule
// without an origin is marked as added on the Permissions page now; one
// with an origin (a revoked rule put back by Undo) keeps it.
func (a *App) AddRule(next gate.Rule) error {
	p, err := a.policy()
	if err != nil {
		return err
	}
	if next.Origin == nil {
		next.Origin = &gate.Origin{Kind: gate.OriginPage, At: time.Now().UTC()}
	}
	return p.AddRule(next)
}

// RevokeRule removes rule index, which must still be seen (the rule the page listed).
func (a *App) RevokeRule(index int, seen gate.Rule) error {
	p, err := a.policy()
	if err != nil {
		return err
	}
	return p.RemoveRule(index, seen)
}

// EditRule replaces rule index, which must still be seen, with next.
func (a *App) EditRule(index int, seen, next gate.Rule) error {
	p, err := a.policy()
	if err != nil {
		return err
	}
	return p.ReplaceRule(index, seen, next)
}

// ResolvePromptScoped answers a permission prompt as ResolvePrompt does;
// for "always", scope picks the rule saved among the prompt's scopes (0:
// the narrowest, the call's own target).
func (a *App) ResolvePromptScoped(promptID, choice, editedArguments string, scope int) error {
	return a.AnswerPrompt(promptID, PromptAnswer{Choice: choice, EditedArguments: editedArguments, Scope: scope})
}

// PromptAnswer is the window's answer to a permission prompt.
type PromptAnswer struct {
	Choice string `json:"choice"` // once, session, always or deny
	// EditedArguments is a JSON object, or "" when unchanged.
	EditedArguments string `json:"edited_arguments,omitempty"`
	// Scope picks the rule "always" saves among the prompt's scopes.
	Scope int `json:"scope,omitempty"`
	// Why, with deny, is what the user wrote in "Tell the agent why".
	Why string `json:"why,omitempty"`
	// Chat, with always, is the conversation's title as the window shows
	// it: the rule's origin on the Permissions page.
	Chat string `json:"chat,omitempty"`
}

// AnswerPrompt answers a permission prompt.
func (a *App) AnswerPrompt(promptID string, ans PromptAnswer) error {
	if a.prompts == nil {
		return errors.New("no prompt is open")
	}
	var args json.RawMessage
	if strings.TrimSpace(ans.EditedArguments) != "" {
		args = json.RawMessage(ans.EditedArguments)
	}
	return a.prompts.Answer(promptID, gate.Answer{Choice: gate.Choice(ans.Choice), EditedArguments: args, Scope: ans.Scope, Why: ans.Why, Chat: ans.Chat})
}
