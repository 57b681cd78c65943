package cliagent

import "encoding/json"

// piParser reads `pi --mode json`: a session header ({"type":"session",
// "id":...}), then agent_start, turn_start, message_start, message_update
// (assistantMessageEvent: text_delta, thinking_delta, toolcall_*, ...),
// message_end (the authoritative message), tool_execution_start /
// tool_execution_end, turn_end, agent_end, plus queue_update, compaction_*
// and auto_retry_* which are ignored.
//
// An assistant message whose text did not stream as deltas (older
// releases) is emitted from its message_end, one block per delta.
type piParser struct {
	*turn
	inAssistant                    bool
	streamedText, streamedThinking bool
}

type piLine struct {
	Type    string     `json:"type"`
	ID      string     `json:"id"`
	Message *piMessage `json:"message"`
	Event   *struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	} `json:"assistantMessageEvent"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	IsError    bool            `json:"isError"`
}

type piMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	Usage        json.RawMessage `json:"usage"`
}

type piBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Thinking string `json:"thinking"`
}

func (p *piParser) line(b []byte) {
	var l piLine
	if !p.decode(b, &l) {
		return
	}
	switch l.Type {
	case "session":
		if l.ID != "" {
			p.resumeID = l.ID
		}
	case "message_start":
		if l.Message != nil && l.Message.Role == "assistant" {
			p.inAssistant, p.streamedText, p.streamedThinking = true, false, false
			p.newMessage()
		}
	case "message_update":
		if l.Event == nil {
			return
		}
		if !p.inAssistant {
			// A release without message_start: updates are assistant output.
			p.inAssistant = true
			p.newMessage()
		}
		switch l.Event.Type {
		case "text_delta":
			p.streamedText = true
			p.textDelta(l.Event.Delta)
		case "thinking_delta":
			p.streamedThinking = true
			p.thinkingDelta(l.Event.Delta)
		}
	case "message_end":
		if l.Message != nil && l.Message.Role == "assistant" {
			p.messageEnd(l.Message)
		}
	case "tool_execution_start":
		p.toolStart(l.ToolCallID, l.ToolName, l.Args)
	case "tool_execution_end":
		p.toolEnd(l.ToolCallID, l.ToolName, l.IsError)
	}
}

func (p *piParser) messageEnd(m *piMessage) {
	if !p.inAssistant {
		p.newMessage()
	}
	var bs []piBlock
	if len(m.Content) > 0 && m.Content[0] == '[' {
		_ = decodeLenient(m.Content, &bs)
	}
	for _, blk := range bs {
		switch {
		case blk.Type == "text" && !p.streamedText:
			p.textDelta(blk.Text)
		case blk.Type == "thinking" && !p.streamedThinking:
			p.thinkingDelta(blk.Thinking)
		}
	}
	p.inAssistant = false
	var usage map[string]any
	if json.Unmarshal(m.Usage, &usage) == nil && usage != nil {
		if p.usage == nil {
			p.usage = map[string]any{}
		}
		addUsage(p.usage, usage)
	}
	// The last assistant message decides: pi retries some errors itself, and
	// a later message that stops normally means the turn recovered.
	if m.StopReason == "error" || m.StopReason == "aborted" {
		msg := m.ErrorMessage
		if msg == "" {
			msg = "pi stopped: " + m.StopReason
		}
		p.fail(msg)
	} else {
		p.failed, p.failMsg = false, ""
	}
}
