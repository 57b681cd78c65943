package tasks

import (
	"fmt"
	"slices"
	"strings"

	"jarvis/service/config"
	"jarvis/service/prompt"
)

// toolWords says what each tool lets a task do, for Words.
var toolWords = map[string]string{
	"read_file":       "read files in the workspace",
	"list_dir":        "list folders in the workspace",
	"search_files":    "search files in the workspace",
	"write_file":      "write files in the workspace",
	"edit_file":       "edit files in the workspace",
	"move_path":       "move or rename files in the workspace",
	"delete_path":     "delete files in the workspace (to Jarvis's trash)",
	"run_command":     "run programs",
	"make_dir":        "create folders in the workspace",
	"open_app":        "open applications",
	"open_url":        "open web pages in your browser",
	"open_path":       "open workspace files in their applications",
	"clipboard_read":  "read the clipboard",
	"clipboard_write": "put text on the clipboard",
	"round_table":     "start round tables",
	"notify":          "show desktop notifications",
	"memory_search":   "search your notes (memory)",
	"memory_get":      "read your notes (memory)",
	"memory_write":    "write to your notes (memory)",
	"agents_message":  "message other agents",
}

// Words says in plain words what a task with these tools may do. The gate's
// own policy still applies on top: a call it would ask about waits for your
// approval in the Inbox.
func Words(tools []string) string {
	if len(tools) == 0 {
		return "This task may use no tools: it can only answer in words."
	}
	var parts []string
	for _, t := range sortedTools(tools) {
		parts = append(parts, ToolWords(t))
	}
	return "This task may " + strings.Join(parts, ", ") + "; nothing else. Calls your policy asks about wait for your approval in the Inbox."
}

// ToolWords says in words what the tool name lets a task do.
func ToolWords(name string) string {
	if w, ok := toolWords[name]; ok {
		return w
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return fmt.Sprintf("use %q of the connected tool server %q", tool, server)
		}
	}
	return fmt.Sprintf("use the tool %q", name)
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
