package acpagent

// What the first prompt of a new ACP session carries before the user's
// message. ACP has no system prompt, so the agent's instructions from Jarvis
// go there, in a block of their own; and when the new session replaces one
// the agent no longer has (it could not be resumed, or the instructions
// changed), a short summary of the conversation so far follows, so the
// agent is not dropped into the middle of it knowing nothing.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// Input is one turn's input.
type Input struct {
	// Text is the user's message.
	Text string
	// Instructions are the agent's instructions from Jarvis (its system
	// prompt), sent at the start of each new ACP session.
	Instructions string
	// InstructionsKey identifies the instructions apart from what may
	// change without a new session (memory, in the service's case): when
	// it changes, the next turn starts a new ACP session. Empty: the
	// Instructions themselves.
	InstructionsKey string
	// Images are the message's attached images as base64 data URLs
	// (data:image/png;base64,…), sent as image blocks to an agent that
	// takes them.
	Images []string
	// History returns the conversation before this turn, oldest first, for
	// the summary a new ACP session gets when there was one; nil: none.
	History func() []Message
	// Mode and Model are the user's choice among the session's modes and
	// models (Choices), kept with the Jarvis session: sent before the
	// prompt when the session is in another. Empty: as it is.
	Mode, Model string
}

// Message is one message of the conversation so far.
type Message struct {
	Role    string // user or assistant
	Content string
}

// imageBlocks turns data URLs into ACP image blocks.
func imageBlocks(urls []string) ([]acp.ContentBlock, error) {
	var out []acp.ContentBlock
	for i, u := range urls {
		head, data, ok := strings.Cut(u, ",")
		media, b64 := strings.CutSuffix(strings.TrimPrefix(head, "data:"), ";base64")
		if !ok || !strings.HasPrefix(head, "data:") || !b64 || !strings.HasPrefix(media, "image/") {
			return nil, fmt.Errorf("acpagent: attachment %d is not an image as a base64 data URL", i+1)
		}
		out = append(out, acp.ImageBlock(data, media))
	}
	return out, nil
}

func (in Input) key() string {
	if in.InstructionsKey != "" {
		return in.InstructionsKey
	}
	return in.Instructions
}

// The summary's caps: the last recapMessages messages, each cut to
// recapMessageBytes, all of it at most recapBytes.
const (
	recapMessages     = 6
	recapMessageBytes = 600
	recapBytes        = 3000
)

const (
	instructionsTag = "jarvis-instructions"
	summaryTag      = "conversation-summary"
)

// untag removes the blocks' own tags from text put inside them, so that no
// message can close a block early.
func untag(s string) string {
	for _, tag := range []string{instructionsTag, summaryTag} {
		s = strings.ReplaceAll(s, "<"+tag+">", "")
		s = strings.ReplaceAll(s, "</"+tag+">", "")
	}
	return s
}

func instructionsBlock(instr string) acp.ContentBlock {
	return acp.TextBlock(fmt.Sprintf("<%s>\nJarvis, the assistant app you work in, gives you these instructions for this conversation. They are not the user's message, which follows.\n\n%s\n</%s>",
		instructionsTag, strings.TrimSpace(untag(instr)), instructionsTag))
}

// summaryBlock recaps the last messages of msgs; n is how many (0: no
// block).
func summaryBlock(msgs []Message) (acp.ContentBlock, int) {
	var kept []Message
	for _, m := range msgs {
		if (m.Role == "user" || m.Role == "assistant") && strings.TrimSpace(m.Content) != "" {
			kept = append(kept, m)
		}
	}
	if len(kept) == 0 {
		return acp.ContentBlock{}, 0
	}
	kept = kept[max(0, len(kept)-recapMessages):]
	var lines []string
	total := 0
	for i := len(kept) - 1; i >= 0; i-- { // the newest matter most
		who := "User"
		if kept[i].Role == "assistant" {
			who = "You"
		}
		line := who + ": " + keepHead(strings.Join(strings.Fields(untag(kept[i].Content)), " "), recapMessageBytes)
		if total+len(line) > recapBytes {
			break
		}
		total += len(line)
		lines = append([]string{line}, lines...)
	}
	if len(lines) == 0 {
		return acp.ContentBlock{}, 0
	}
	return acp.TextBlock(fmt.Sprintf("<%s>\nThis conversation continues one you no longer have. Its last %d messages, shortened:\n%s\n</%s>",
		summaryTag, len(lines), strings.Join(lines, "\n"), summaryTag)), len(lines)
}

// keepHead cuts s to at most limit bytes at a character boundary, marking
// the cut with "…".
func keepHead(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
