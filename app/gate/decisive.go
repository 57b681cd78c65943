package gate

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Field is one line of a prompt's decisive part.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// decisive returns what a call acts on, most important first, each value in
// full and in its canonical form: the prompt shows these above everything
// else, so long or many other arguments cannot push them out of view.
func decisive(tool string, args map[string]json.RawMessage, target string) []Field {
	var out []Field
	add := func(name, key string) {
		if _, ok := args[key]; ok {
			out = append(out, Field{Name: name, Value: argValue(args, key)})
		}
	}
	switch tool {
	case "run_command":
		var list []string
		json.Unmarshal(args["args"], &list)
		cmd := []string{shellWord(argValue(args, "program"))}
		for _, a := range list {
			cmd = append(cmd, shellWord(a))
		}
		out = append(out, Field{Name: "command", Value: strings.Join(cmd, " ")})
		add("folder", "cwd")
		if callNetwork(args) {
			out = append(out, Field{Name: "network", Value: "allowed: it can reach other machines and this one's services"})
		} else {
			out = append(out, Field{Name: "network", Value: "none"})
		}
	case "read_file", "write_file", "edit_file", "make_dir", "delete_path", "list_dir", "open_path":
		add("path", "path")
	case "move_path":
		add("from", "from")
		add("to", "to")
	case "search_files":
		add("folder", "path")
		add("name", "name")
		add("text", "content")
	case "open_url":
		add("url", "url")
	case "open_app":
		add("app", "app_id")
	case "clipboard_write":
		add("text", "text")
	case "notify":
		add("title", "title")
	case "agents_message":
		add("agent", "agentId")
		if target != "" {
			out = append(out, Field{Name: "sends to", Value: target})
		}
		add("message", "content")
	case "agent_permission":
		add("agent", "agent")
		add("wants to", "title")
		add("kind", "kind")
	case "round_table":
		if target != "" {
			out = append(out, Field{Name: "sends to", Value: target})
		}
		add("task", "task")
	case "schedule_task":
		add("task", "name")
		add("when", "schedule")
		if target != "" { // the schedule and the tools in words (service/tasks)
			out = append(out, Field{Name: "creates", Value: target})
		}
		add("prompt", "prompt")
	case "mcp_sampling": // an MCP server's request for a completion (app/mcpsampling.go)
		add("server", "server")
		add("model", "model")
		add("instructions", "system_prompt")
		var msgs []struct{ Role, Text string }
		json.Unmarshal(args["messages"], &msgs)
		for _, m := range msgs {
			out = append(out, Field{Name: m.Role, Value: m.Text})
		}
	}
	return out
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellWord renders one argv element so that the command line reads
// unambiguously: as is when plain, else single-quoted as a POSIX shell
// would need (nothing is run through a shell).
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
