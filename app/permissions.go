package app

// The Permissions page's bindings: the gate's policy rules (the "always
// allow" rules saved from prompts and any written by hand) listed with the
// workspace they apply to, revoked or edited one at a time, and the prompt
// answer that picks the scope of an "always allow" rule.

import (
	"encoding/json"
	"errors"
	"strings"

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
	perms := Permissions{Workspace: p.Workspace(), Rules: rules, DefaultCommands: gate.DefaultCommands, Sandbox: []tools.Protection{}}
	if s, ok := p.(interface{ Sandbox() tools.Sandbox }); ok {
		perms.Sandbox = s.Sandbox().Protections()
	}
	return perms, nil
}

// AddRule adds a rule to the policy: on the Permissions page, a command
// rule (program and argument prefix, "npm run *") or any other.
func (a *App) AddRule(next gate.Rule) error {
	p, err := a.policy()
	if err != nil {
		return err
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
	if a.prompts == nil {
		return errors.New("no prompt is open")
	}
	var args json.RawMessage
	if strings.TrimSpace(editedArguments) != "" {
		args = json.RawMessage(editedArguments)
	}
	return a.prompts.Answer(promptID, gate.Answer{Choice: gate.Choice(choice), EditedArguments: args, Scope: scope})
}
