package cliagent

import (
	"encoding/json"
	"strings"
)

// codexParser reads `codex exec --json`: thread.started (thread_id),
// turn.started, item.started / item.updated / item.completed (an item of
// type agent_message, reasoning, command_execution, file_change,
// mcp_tool_call, web_search, todo_list, error, ...), turn.completed
// (usage), turn.failed (error.message) and error (message).
//
// Messages and reasoning usually arrive whole in item.completed; if a
// release streams them through item.updated, the growth of the text is
// emitted as deltas and the completion adds only what is new.
type codexParser struct {
	*turn
	emitted map[string]string // item id -> text already emitted
}

type codexLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     *codexItem      `json:"item"`
	Usage    json.RawMessage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	ItemType string `json:"item_type"` // early releases
	Text     string `json:"text"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	// command_execution
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	// file_change
	Changes json.RawMessage `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      json.RawMessage `json:"tool"` // a name; a collab_tool_call's is an enum string too
	Arguments json.RawMessage `json:"arguments"`
	// web_search
	Query string `json:"query"`
}

func (p *codexParser) line(b []byte) {
	var l codexLine
	if !p.decode(b, &l) {
		return
	}
	switch l.Type {
	case "thread.started":
		if l.ThreadID != "" {
			p.resumeID = l.ThreadID
		}
	case "item.started", "item.updated", "item.completed":
		if l.Item != nil {
			p.item(l.Type, l.Item)
		}
	case "turn.completed":
		var usage map[string]any
		if json.Unmarshal(l.Usage, &usage) == nil && usage != nil {
			if p.usage == nil {
				p.usage = map[string]any{}
			}
			addUsage(p.usage, usage)
		}
		// A turn that completes recovered from any earlier error event.
		p.errHint = ""
	case "turn.failed":
		msg := ""
		if l.Error != nil {
			msg = l.Error.Message
		}
		if msg == "" {
			msg = p.errHint
		}
		p.fail(msg)
	case "error":
		// Unrecoverable per the protocol, but a turn.failed or the exit
		// code decides; keep the message to explain either.
		msg := l.Message
		if msg == "" && l.Error != nil {
			msg = l.Error.Message
		}
		if msg != "" {
			p.errHint = msg
		}
	}
}

func (p *codexParser) item(event string, it *codexItem) {
	kind := it.Type
	if kind == "" {
		kind = it.ItemType
	}
	switch kind {
	case "agent_message", "assistant_message":
		p.progressive(it, p.textDelta)
	case "reasoning":
		p.progressive(it, p.thinkingDelta)
	case "error":
		p.log.Debug("cliagent: codex reported a non-fatal error", "message", it.Message)
	default:
		name, input, ok := codexTool(kind, it)
		if !ok {
			return // todo_list, plan and future non-tool items
		}
		switch event {
		case "item.started":
			p.toolStart(it.ID, name, input)
		case "item.completed":
			p.toolStart(it.ID, name, input) // file_change arrives only completed
			p.toolEnd(it.ID, name, it.Status == "failed" || it.Status == "declined")
		}
	}
}

// progressive emits the part of an item's text not yet emitted.
func (p *codexParser) progressive(it *codexItem, emit func(string)) {
	if p.emitted == nil {
		p.emitted = map[string]string{}
	}
	prev, seen := p.emitted[it.ID]
	if it.ID == "" {
		prev, seen = "", false
	}
	if !seen {
		p.newMessage()
	}
	if !strings.HasPrefix(it.Text, prev) {
		// Rewritten rather than extended: what was sent stands.
		p.log.Debug("cliagent: codex item text changed non-incrementally", "item", it.ID)
		return
	}
	emit(it.Text[len(prev):])
	p.emitted[it.ID] = it.Text
}

// codexTool names a tool-like item and summarizes its input. MCP tools get
// Claude Code's mcp__server__tool naming so the two CLIs' metadata agree.
func codexTool(kind string, it *codexItem) (string, json.RawMessage, bool) {
	marshal := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	switch kind {
	case "command_execution":
		return "shell", marshal(map[string]string{"command": it.Command}), true
	case "file_change":
		var changes any
		_ = json.Unmarshal(it.Changes, &changes)
		return "apply_patch", marshal(map[string]any{"changes": changes}), true
	case "mcp_tool_call":
		return "mcp__" + it.Server + "__" + rawString(it.Tool), it.Arguments, true
	case "web_search":
		return "web_search", marshal(map[string]string{"query": it.Query}), true
	case "collab_tool_call":
		return rawString(it.Tool), nil, true
	}
	return "", nil, false
}
