package cliagent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// claudeParser reads `claude -p --output-format stream-json --verbose
// --include-partial-messages`: lines of type system (init: session_id),
// stream_event (raw API streaming events: text and thinking deltas),
// assistant (complete content blocks: text, thinking, tool_use), user
// (tool_result blocks) and result (the last line: success or error,
// session_id, usage, cost).
//
// With partial messages, text arrives twice: as stream_event deltas and
// again in the assistant line. A message whose deltas were seen (by message
// id) has its assistant text skipped; one without (older CLIs, the flag
// filtered out, synthetic error messages) is emitted one block per delta.
type claudeParser struct {
	*turn
	streamed   map[string]bool // message ids that arrived as stream_event deltas
	partial    bool            // any stream_event seen
	lastMsgID  string
	haveResult bool
}

type claudeLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID json.RawMessage `json:"parent_tool_use_id"`
	Message         *claudeMessage  `json:"message"`
	Event           *claudeEvent    `json:"event"`
	// result
	IsError      bool            `json:"is_error"`
	Result       json.RawMessage `json:"result"`
	Errors       json.RawMessage `json:"errors"`
	Usage        json.RawMessage `json:"usage"`
	TotalCostUSD json.RawMessage `json:"total_cost_usd"`
	NumTurns     json.RawMessage `json:"num_turns"`
	DurationMs   json.RawMessage `json:"duration_ms"`
	// system api_retry
	Attempt      int             `json:"attempt"`
	MaxRetries   int             `json:"max_retries"`
	RetryDelayMs float64         `json:"retry_delay_ms"`
	ErrorStatus  int             `json:"error_status"`
	Error        json.RawMessage `json:"error"`
}

type claudeMessage struct {
	ID string `json:"id"`
	// Model is "<synthetic>" for a message claude made up itself to
	// report an error ("Invalid API key · Please run /login").
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"` // an array of blocks, or a string for user text
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

type claudeEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
	Delta *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

func (p *claudeParser) line(b []byte) {
	var l claudeLine
	if !p.decode(b, &l) {
		return
	}
	if l.SessionID != "" {
		p.resumeID = l.SessionID
	}
	// Lines from a subagent (the Task tool) carry the id of the tool call
	// that runs it: its tool use counts, its text is not the answer.
	sub := len(l.ParentToolUseID) > 0 && string(l.ParentToolUseID) != "null"
	switch l.Type {
	case "stream_event":
		if l.Event != nil && !sub {
			p.streamEvent(l.Event)
		}
	case "assistant":
		if l.Message != nil {
			p.assistant(l.Message, sub)
		}
	case "user":
		if l.Message != nil {
			for _, blk := range blocks(l.Message.Content) {
				if blk.Type == "tool_result" {
					p.toolEnd(blk.ToolUseID, "", blk.IsError)
				}
			}
		}
	case "result":
		p.result(&l)
	case "system":
		if l.Subtype == "api_retry" {
			p.apiRetry(&l)
		}
	default:
		// Future types.
	}
}

func (p *claudeParser) streamEvent(ev *claudeEvent) {
	p.partial = true
	switch ev.Type {
	case "message_start":
		if ev.Message != nil && ev.Message.ID != "" {
			p.streamed[ev.Message.ID] = true
		}
		p.newMessage()
	case "content_block_delta":
		if ev.Delta == nil {
			return
		}
		switch ev.Delta.Type {
		case "text_delta":
			p.textDelta(ev.Delta.Text)
		case "thinking_delta":
			p.thinkingDelta(ev.Delta.Thinking)
		}
	}
}

// apiRetry reports claude retrying a failed API request, which it does
// for minutes with nothing else on the stream; a refused login is not
// worth retrying and ends the turn.
func (p *claudeParser) apiRetry(l *claudeLine) {
	why := rawString(l.Error)
	if why == "" {
		why = "error"
	}
	if l.ErrorStatus == 401 || l.ErrorStatus == 403 || strings.Contains(why, "auth") {
		p.authFailed(fmt.Sprintf("claude's API refused its credentials (HTTP %d %s)", l.ErrorStatus, why))
		return
	}
	msg := fmt.Sprintf("claude: the API answered %d (%s); retrying", l.ErrorStatus, why)
	if l.ErrorStatus == 0 {
		msg = fmt.Sprintf("claude: the API request failed (%s); retrying", why)
	}
	if l.Attempt > 0 && l.MaxRetries > 0 {
		msg += fmt.Sprintf(" (attempt %d of %d)", l.Attempt, l.MaxRetries)
	}
	if l.RetryDelayMs > 0 {
		msg += fmt.Sprintf(" in %.1f s", l.RetryDelayMs/1000)
	}
	p.status(msg)
}

func (p *claudeParser) assistant(m *claudeMessage, sub bool) {
	if m.Model == "<synthetic>" {
		// claude's own error report, not the model's answer.
		for _, blk := range blocks(m.Content) {
			if blk.Type == "text" && blk.Text != "" {
				p.errHint = blk.Text
			}
		}
		return
	}
	streamed := p.streamed[m.ID] || (m.ID == "" && p.partial)
	if !sub && !streamed && (m.ID == "" || m.ID != p.lastMsgID) {
		p.newMessage()
	}
	if !sub {
		p.lastMsgID = m.ID
	}
	for _, blk := range blocks(m.Content) {
		switch blk.Type {
		case "text":
			if !sub && !streamed {
				p.textDelta(blk.Text)
			}
		case "thinking":
			if !sub && !streamed {
				p.thinkingDelta(blk.Thinking)
			}
		case "tool_use", "server_tool_use", "mcp_tool_use":
			p.toolStart(blk.ID, blk.Name, blk.Input)
		}
	}
}

func (p *claudeParser) result(l *claudeLine) {
	p.haveResult = true
	text := rawString(l.Result)
	var usage map[string]any
	if json.Unmarshal(l.Usage, &usage) != nil {
		usage = nil
	}
	for key, raw := range map[string]json.RawMessage{
		"total_cost_usd": l.TotalCostUSD, "num_turns": l.NumTurns, "duration_ms": l.DurationMs,
	} {
		var v float64
		if json.Unmarshal(raw, &v) == nil {
			if usage == nil {
				usage = map[string]any{}
			}
			usage[key] = v
		}
	}
	if usage != nil {
		p.usage = usage
	}
	if l.IsError || strings.HasPrefix(l.Subtype, "error") {
		msg := text
		if msg == "" {
			msg = claudeErrors(l.Errors)
		}
		if msg == "" {
			msg = l.Subtype
		}
		p.fail(msg)
		return
	}
	if p.text.Len() == 0 {
		// Nothing streamed (e.g. the CLI printed only the result line):
		// the result text is the answer.
		p.textDelta(text)
	}
}

// claudeErrors joins a result's errors, which are strings or objects with
// a message.
func claudeErrors(raw json.RawMessage) string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var msgs []string
	for _, it := range items {
		if s := rawString(it); s != "" {
			msgs = append(msgs, s)
			continue
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(it, &o) == nil && o.Message != "" {
			msgs = append(msgs, o.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

// blocks decodes message content. A string (plain user text) yields none;
// a block of an unexpected shape is kept as far as it decodes.
func blocks(raw json.RawMessage) []claudeBlock {
	var bs []claudeBlock
	if len(raw) > 0 && raw[0] == '[' {
		_ = decodeLenient(raw, &bs)
	}
	return bs
}
