package service_test

import (
	"context"
	"strings"
	"testing"

	"jarvis/api"
)

// A call the user denies with a reason: the model reads the reason with the
// denial (the "Tell the agent why" field of the window's prompt), so its next
// step can take it into account.
func TestDeniedCallTellsTheModelWhy(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	msg := `tidy up [[tool write_file {"path":"notes.txt","content":"x"}]]`
	why := "Keep notes.txt as it is; write to notes-new.txt instead."
	err := e.c.ChatStream(context.Background(), sid, msg, func(ev api.StreamEvent) error {
		if ev.Type != api.EventToolRequest {
			return nil
		}
		tc := decode[api.ToolCall](t, ev.Data)
		deny := "denied: write_file is risky; denied by the user"
		go func() {
			if err := e.c.PostToolResult(context.Background(), sid, api.ToolResult{ID: tc.ID, OK: false, Error: &deny, UserReason: why}); err != nil {
				t.Errorf("post: %v", err)
			}
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	up := e.upstream.Requests()
	last := up[len(up)-1].Messages
	tool := last[len(last)-1]
	if tool.Role != "tool" || !strings.Contains(tool.Content, why) || !strings.Contains(tool.Content, "denied") {
		t.Fatalf("the model read %q (role %s), not the user's reason %q", tool.Content, tool.Role, why)
	}
	// The stored history keeps it too: a later turn's model reads the same.
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range tr.Messages {
		if m.Role == "tool" && strings.Contains(m.Text, why) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no stored tool message holds the reason: %+v", tr.Messages)
	}
}
