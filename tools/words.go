package tools

import (
	"fmt"
	"strings"
)

// doing says what each tool lets an agent do, in words.
var doing = map[string]string{
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

// Words says in words what the tool name lets an agent do ("write files in
// the workspace"): a scheduled task's tools (service/tasks) and the call an
// approval in the Inbox waits for (app).
func Words(name string) string {
	if w, ok := doing[name]; ok {
		return w
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return fmt.Sprintf("use %q of the connected tool server %q", tool, server)
		}
	}
	return fmt.Sprintf("use the tool %q", name)
}
