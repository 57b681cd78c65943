// Package prompt builds what a chat agent's model is told and offered:
// the scope of its tools (ToolInScope, EffectiveTools), the agents it may
// reach, the skills folders it may use (SkillCache) and its system prompt
// (BuildSystemPrompt). Pure functions of the configuration; the service
// adds memory and the model's budget.
package prompt

// Prompt construction (docs/protocols/agents.md "Prompt Construction"): the system prompt of
// every chat run is rebuilt from the current configuration, in this order:
//
//  1. the base prompt: the agent's systemPrompt, else "You are ${displayName}.
//     ${description}", else the global default;
//  2. "Available tools": the run's tools except system_ ones;
//  3. "Available skills": with toolExposure skills or mixed, the SKILL.md
//     folders under <data-dir>/skills/ the agent may use (skills.go);
//  4. memory: whatever the memory integration's hook returns;
//  5. "Available agents": the agents visible and allowed from this agent,
//     with how to use agents_message (only when the agent has that tool).
//
// The sections are informational: tool scoping is enforced separately, when
// tools are offered and again when a call runs (ToolInScope, scope.go).

import (
	"strings"

	"jarvis/service/config"
	"jarvis/service/llm"
)

// Tool is a tool as scoping sees it: its spec and its capabilities.
type Tool struct {
	Spec         llm.ToolSpec
	Capabilities []string
}

// EffectiveTools is docs/protocols/agents.md's getEffectiveTools: the tools of all that the
// agent may use, in their order.
func EffectiveTools(a config.Agent, all []Tool) []llm.ToolSpec {
	out := make([]llm.ToolSpec, 0, len(all))
	for _, t := range all {
		if ToolInScope(a, t.Spec.Name, t.Capabilities) {
			out = append(out, t.Spec)
		}
	}
	return out
}

// AgentAllowed reports whether agent a may see and message the agent with
// id (agentAllowlist, then agentDenylist, as docs/protocols/agents.md applies them).
func AgentAllowed(a config.Agent, id string) bool {
	if a.AgentAllowlist != nil && !anyGlob(a.AgentAllowlist, id) {
		return false
	}
	return a.AgentDenylist == nil || !anyGlob(a.AgentDenylist, id)
}

// ReachableAgents are the agents a may delegate to: visible, allowed, not itself.
func ReachableAgents(c *config.Config, a config.Agent) []config.Agent {
	var out []config.Agent
	for _, o := range c.Agents {
		if o.AgentID != a.AgentID && o.Visible() && AgentAllowed(a, o.AgentID) {
			out = append(out, o)
		}
	}
	return out
}

// UsesSkills reports whether the agent's toolExposure lists skills. Jarvis's
// skills are instruction folders used with the agent's ordinary tools, not
// replacements for tools, so "skills" and "mixed" both keep the tools.
func UsesSkills(a config.Agent) bool {
	return a.ToolExposure == "skills" || a.ToolExposure == "mixed"
}

// BuildSystemPrompt builds the system prompt of a chat run of agent a whose
// model is offered the tools offered (already scoped), with the skills it
// may use and the memory section (either may be empty).
func BuildSystemPrompt(c *config.Config, a config.Agent, offered []llm.ToolSpec, skills []Skill, memory string) string {
	var b strings.Builder
	b.Grow(1024 + 96*len(offered))
	writeBase(&b, c, a)
	hasMessage := false
	listed := 0
	for _, t := range offered {
		if t.Name == "agents_message" { // the delegation tool
			hasMessage = true
		}
		if strings.HasPrefix(t.Name, "system_") {
			continue
		}
		if listed == 0 {
			b.WriteString("\n\n## Available tools\n")
		}
		listed++
		b.WriteString("- ")
		b.WriteString(t.Name)
		b.WriteString(": ")
		b.WriteString(t.Description)
		b.WriteByte('\n')
	}
	if listed > 0 {
		b.WriteString("\nTools that act on the user's computer run only after the user's desktop allows them; a denied call is reported back to you.")
	}
	writeSkills(&b, skills)
	if memory = strings.TrimSpace(memory); memory != "" {
		b.WriteString("\n\n")
		b.WriteString(memory)
	}
	if hasMessage {
		writeAgents(&b, ReachableAgents(c, a))
	}
	return b.String()
}

func writeBase(b *strings.Builder, c *config.Config, a config.Agent) {
	switch {
	case strings.TrimSpace(a.SystemPrompt) != "":
		b.WriteString(a.SystemPrompt)
	case a.AgentID != "":
		b.WriteString("You are " + a.DisplayName + ". " + a.Description)
	default:
		b.WriteString(c.SystemPrompt)
	}
}

func writeSkills(b *strings.Builder, skills []Skill) {
	if len(skills) == 0 {
		return
	}
	b.WriteString("\n\n## Available skills\nSkills are folders of instructions. Before using one, read its SKILL.md and follow it; run its CLI, when it has one, with your tools.\n")
	for _, sk := range skills {
		b.WriteString("- ")
		b.WriteString(sk.ID)
		if sk.Description != "" {
			b.WriteString(": ")
			b.WriteString(sk.Description)
		}
		b.WriteString(" (SKILL.md: ")
		b.WriteString(sk.Path)
		if sk.CLI != "" {
			b.WriteString("; CLI: ")
			b.WriteString(sk.CLI)
		}
		b.WriteString(")\n")
	}
}

func writeAgents(b *strings.Builder, agents []config.Agent) {
	if len(agents) == 0 {
		return
	}
	b.WriteString("\n\n## Available agents\nAvailable agents you can delegate to:\n")
	for _, o := range agents {
		b.WriteString("- ")
		b.WriteString(o.AgentID)
		b.WriteString(": ")
		b.WriteString(o.DisplayName)
		if o.Description != "" {
			b.WriteString(" - ")
			b.WriteString(o.Description)
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nUse agents_message to ask another agent to perform a task: give its agentId and the content of your message. " +
		"mode \"sync\" (default) waits for the reply (up to timeout seconds, default 300); \"async\" starts the work and returns at once. " +
		"session \"latest-or-create\" (default) continues the agent's latest conversation, \"create\" starts a new one, \"latest\" requires one, or give a session id. " +
		"The exchange is kept in that agent's session.")
}
