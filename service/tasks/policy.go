package tasks

import (
	"slices"
	"strings"

	"jarvis/service/config"
	"jarvis/service/prompt"
	"jarvis/tools"
)

// Words says in plain words what a task with these tools may do. The gate's
// own policy still applies on top: a call it would ask about waits for your
// approval in the Inbox.
func Words(names []string) string {
	if len(names) == 0 {
		return "This task may use no tools: it can only answer in words."
	}
	var parts []string
	for _, t := range sortedTools(names) {
		parts = append(parts, tools.Words(t))
	}
	return "This task may " + strings.Join(parts, ", ") + "; nothing else. Calls your policy asks about wait for your approval in the Inbox."
}

func sortedTools(tools []string) []string {
	out := slices.Clone(tools)
	slices.Sort(out)
	return slices.Compact(out)
}

// Allows says whether a task with these tools may call name.
func Allows(tools []string, name string) bool { return slices.Contains(tools, name) }

// Narrow is agent a as a task's run sees it: only the task's tools that a
// itself may use are in scope (offered, and allowed at call time); its
// capability lists still hold.
func Narrow(a config.Agent, tools []string) config.Agent {
	allowed := make([]string, 0, len(tools))
	for _, t := range tools {
		if prompt.ToolInScope(config.Agent{ToolAllowlist: a.ToolAllowlist, ToolDenylist: a.ToolDenylist}, t, nil) {
			allowed = append(allowed, t)
		}
	}
	a.ToolAllowlist = allowed
	return a
}
