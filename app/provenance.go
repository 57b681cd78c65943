package app

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"jarvis/api"
	"jarvis/tools"
)

// Whether the desktop vouches for a tool's result (api.ToolResult.Trust):
// the service keeps the answer with the result and names every untrusted
// one on later calls, so the gate can ask before data leaves
// (service/provenance has the table). Trusted: Jarvis's own words (a
// write's confirmation, a listing) and the user's own workspace files.
// Untrusted: a command's output, the clipboard, an MCP server's result, and
// a workspace file that carries a download mark (downloadOrigin: the
// address browsers record on what they save), for which the origin is that
// address. A tool not named here is untrusted (fail closed).

// resultTrust judges the result of an allowed call of tool name with its
// canonical arguments.
func (r *Runner) resultTrust(name string, args json.RawMessage, result string) (string, *api.Source) {
	untrusted := func(src api.Source) (string, *api.Source) { return api.Untrusted, &src }
	if server, ok := mcpServer(name); ok {
		return untrusted(api.Source{Kind: "mcp", Name: server})
	}
	var a struct {
		Path    string `json:"path"`
		Program string `json:"program"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return untrusted(api.Source{Kind: "tool", Name: name})
	}
	switch name {
	case "run_command":
		return untrusted(api.Source{Kind: "tool", Name: name, Detail: a.Program})
	case "clipboard_read":
		return untrusted(api.Source{Kind: "tool", Name: name, Detail: "the clipboard"})
	case "read_file":
		if from := tools.DownloadOrigin(filepath.Join(r.x.Workspace(), a.Path)); from != "" {
			return untrusted(api.Source{Kind: "tool", Name: name, Detail: a.Path + " downloaded from " + from})
		}
		return api.Trusted, nil
	case "search_files":
		var res tools.SearchResult
		if err := json.Unmarshal([]byte(result), &res); err != nil {
			return untrusted(api.Source{Kind: "tool", Name: name})
		}
		for _, h := range res.Hits {
			if h.Text == "" {
				continue // a name match shows no content
			}
			if from := tools.DownloadOrigin(filepath.Join(r.x.Workspace(), h.Path)); from != "" {
				return untrusted(api.Source{Kind: "tool", Name: name, Detail: h.Path + " downloaded from " + from})
			}
		}
		return api.Trusted, nil
	case "list_dir", "write_file", "edit_file", "make_dir", "move_path", "delete_path", "open_path", "open_url", "open_app",
		"notify", "clipboard_write", "agents_message", "round_table", "agent_permission":
		return api.Trusted, nil
	}
	return untrusted(api.Source{Kind: "tool", Name: name})
}

// mcpServer is the server of an MCP tool's name (mcp__<server>__<tool>).
func mcpServer(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", false
	}
	server, _, ok := strings.Cut(rest, "__")
	return server, ok
}
