package api

import (
	"encoding/json"
	"strings"
)

// Source is where untrusted text in a model's context came from: a tool's
// result the desktop did not vouch for, an MCP server's result, another
// agent's reply or message, a memory entry written after untrusted content,
// an attachment. The service lists the sources of a turn's context on every
// tool.request (ToolCall.Untrusted), so the desktop's gate can ask before
// data leaves (docs/SECURITY.md, "Where the words came from").
type Source struct {
	// Kind: "tool" (an OS tool's result: a command's output, a downloaded
	// file), "mcp" (an MCP server's result), "agent" (another agent's reply
	// or delegated message), "memory" (memory entries written after
	// untrusted content), "attachment" (a file attached to a message),
	// "summary" (a summary of earlier messages that held untrusted content).
	Kind string `json:"kind"`
	// Name is the tool, server, agent or file.
	Name string `json:"name,omitempty"`
	// Detail is where exactly: a URL a file was downloaded from, a path.
	Detail string `json:"detail,omitempty"`
}

// String says the source in words, for prompts, cards and audit rows:
// "the output of run_command (curl)", "a reply from agent helper".
func (s Source) String() string {
	var out string
	switch s.Kind {
	case "tool":
		out = "the result of " + s.Name
	case "mcp":
		out = "a result of MCP server " + s.Name
	case "agent":
		out = "a message from agent " + s.Name
	case "memory":
		out = "memory entries written after untrusted content"
	case "attachment":
		out = "an attached file"
		if s.Name != "" {
			out += " " + s.Name
		}
	case "summary":
		out = "a summary of earlier messages that held untrusted content"
	default:
		out = "content from " + s.Kind
		if s.Name != "" {
			out += " " + s.Name
		}
	}
	if s.Detail != "" && s.Kind != "attachment" {
		out += " (" + s.Detail + ")"
	}
	return out
}

// MarshalJSON adds the source in words ("label"), so that clients show
// what the service and the desktop say, and never word it themselves.
func (s Source) MarshalJSON() ([]byte, error) {
	type plain Source
	return json.Marshal(struct {
		plain
		Label string `json:"label"`
	}{plain(s), s.String()})
}

// SourceWords says each source of list in words.
func SourceWords(list []Source) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.String()
	}
	return out
}

// Sources says a list of sources in words, joined with "; ".
func Sources(list []Source) string { return strings.Join(SourceWords(list), "; ") }

// Trust values of ToolResult.Trust: whether the desktop vouches for a
// result's text.
const (
	// Trusted: Jarvis's own words (a write's confirmation) or the user's
	// own workspace file.
	Trusted = "trusted"
	// Untrusted: text someone else may have written (a command's output,
	// a downloaded file, an MCP server's result); Origin says whence.
	Untrusted = "untrusted"
)
