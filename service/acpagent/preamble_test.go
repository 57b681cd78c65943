package acpagent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The first prompt of each new ACP session carries the instructions in a
// block of their own; a changed instructions key starts a new session; a
// session that replaces one (instructions changed, or the process crashed
// and could not resume) also gets a short summary of the conversation.
func TestInstructionsAndSummaryInNewSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hist := []Message{{"user", "Please fix the login bug."}, {"assistant", "I changed auth.go to check the token's expiry."}, {"tool", "not a message"}}
	in := func(instr string, h []Message) Input {
		return Input{Text: "preamble", Instructions: instr, InstructionsKey: "k-" + instr, History: func() []Message { return h }}
	}
	first, _, err := f.promptIn(in("Be brief.", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Text != "preamble:\n<jarvis-instructions>\nJarvis, the assistant app you work in, gives you these instructions for this conversation. They are not the user's message, which follows.\n\nBe brief.\n</jarvis-instructions>" ||
		first.Summarized != 0 || first.InstructionsChanged || first.SessionLost {
		t.Fatalf("first turn: %+v", first)
	}
	again, _, err := f.promptIn(in("Be brief.", hist), nil)
	if err != nil || again.Text != "preamble:\n" || again.SessionID != first.SessionID {
		t.Fatalf("same session: %+v %v; want no preamble", again, err)
	}
	changed, _, err := f.promptIn(in("Be thorough.", hist), nil)
	if err != nil || !changed.InstructionsChanged || changed.SessionID == first.SessionID || changed.Summarized != 2 {
		t.Fatalf("changed instructions: %+v %v", changed, err)
	}
	wantSummary := "<conversation-summary>\nThis conversation continues one you no longer have. Its last 2 messages, shortened:\nUser: Please fix the login bug.\nYou: I changed auth.go to check the token's expiry.\n</conversation-summary>"
	if !strings.Contains(changed.Text, "\nBe thorough.\n</jarvis-instructions>\n--\n"+wantSummary) {
		t.Errorf("changed instructions: the first prompt was %q", changed.Text)
	}
	crash := in("Be thorough.", hist)
	crash.Text = "crash"
	if _, _, err := f.promptIn(crash, nil); !errors.Is(err, ErrExited) {
		t.Fatalf("crash: %v", err)
	}
	lost, _, err := f.promptIn(in("Be thorough.", hist), nil)
	if err != nil || !lost.SessionLost || lost.InstructionsChanged || lost.Summarized != 2 || !strings.HasSuffix(lost.Text, wantSummary) {
		t.Fatalf("after the crash: %+v %v", lost, err)
	}
}

// The summary is the last few messages, each shortened, all of it capped;
// a message cannot close the block early.
func TestSummaryCaps(t *testing.T) {
	t.Parallel()
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{"user", fmt.Sprintf("m%d </conversation-summary> ", i) + strings.Repeat("é", 1000)})
	}
	b, n := summaryBlock(msgs)
	text := b.Text.Text
	if n != 4 || strings.Count(text, "User: ") != 4 || !strings.Contains(text, "User: m9 ") || strings.Contains(text, "m5 ") {
		t.Errorf("kept %d messages: %q", n, text)
	}
	if strings.Count(text, "</conversation-summary>") != 1 || strings.Count(text, "…") != 4 || len(text) > recapBytes+200 {
		t.Errorf("caps: %d bytes, %q", len(text), text)
	}
	if _, n := summaryBlock([]Message{{"tool", "x"}, {"user", "  "}}); n != 0 {
		t.Errorf("a summary of nothing: %d", n)
	}
}
