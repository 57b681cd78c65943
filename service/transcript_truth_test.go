package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
)

// A tool call has one id: the one the desktop saw in tool.request (and
// recorded in its audit log) is the one the stored transcript names, on
// the assistant's call and on the tool's result, after a restart too; the
// model is sent the same id.
func TestToolCallHasOneIDAfterRestart(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	var reqs []api.ToolCall
	answer := e.answerTools(sid, func(tc api.ToolCall) api.ToolResult {
		reqs = append(reqs, tc)
		return api.ToolResult{OK: true, Result: "ran " + tc.Name}
	})
	if err := e.c.ChatStream(context.Background(), sid, `[[tool list_dir {"path":"docs"}]]`, func(ev api.StreamEvent) error { answer(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 {
		t.Fatalf("tool requests %+v", reqs)
	}
	e.stop()
	e.start()
	var callIDs, resultIDs []string
	for _, m := range e.transcript(sid) {
		switch m.Role {
		case "assistant":
			var calls []struct {
				ID string `json:"id"`
			}
			if len(m.ToolCalls) > 0 {
				if err := json.Unmarshal(m.ToolCalls, &calls); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range calls {
				callIDs = append(callIDs, c.ID)
			}
		case "tool":
			resultIDs = append(resultIDs, m.ToolCallID)
		}
	}
	if len(callIDs) != 1 || callIDs[0] != reqs[0].ID {
		t.Fatalf("the stored call's id is %v, the desktop saw %q", callIDs, reqs[0].ID)
	}
	if len(resultIDs) != 1 || resultIDs[0] != reqs[0].ID {
		t.Fatalf("the stored result's id is %v, the desktop saw %q", resultIDs, reqs[0].ID)
	}
	up := e.upstream.Requests()
	last := up[len(up)-1].Messages
	if tm := last[len(last)-1]; tm.Role != "tool" || tm.ToolCallID != reqs[0].ID {
		t.Fatalf("the model was sent the result as %+v, want id %q", tm, reqs[0].ID)
	}
}

// A turn that ends in an error or is stopped leaves a line in the stored
// transcript, so a reload after a restart shows how it ended; the model is
// never sent that line.
func TestFailedAndStoppedTurnsKeepTheirLine(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	// An upstream failure.
	if err := e.c.ChatStream(context.Background(), sid, "[[status 500]]", func(api.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A stopped turn, after part of its answer was shown.
	done := make(chan error, 1)
	var got collect
	before := len(e.upstream.Requests())
	go func() {
		done <- e.c.ChatStream(context.Background(), sid, "half an answer [[hang]]", func(ev api.StreamEvent) error { got.add(ev); return nil })
	}()
	testwait.Until(t, "the stopped turn's model request", 10*time.Second, func() bool { return len(e.upstream.Requests()) > before })
	if _, err := e.c.Cancel(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.stop()
	e.start()
	var lines []string
	for _, m := range e.transcript(sid) {
		if m.Role != "status" {
			continue
		}
		var meta struct {
			Kind string `json:"kind"`
			Code string `json:"code"`
		}
		_ = json.Unmarshal(m.Meta, &meta)
		lines = append(lines, meta.Kind+"/"+meta.Code+": "+m.Text)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "error/") || !strings.HasPrefix(lines[1], "stopped/cancelled: ") {
		t.Fatalf("status lines after a restart: %q", lines)
	}
	r, err := e.c.Chat(context.Background(), sid, "next")
	if err != nil || r.Assistant.Text() != "You said: next" {
		t.Fatalf("%v %+v", err, r)
	}
	up := e.upstream.Requests()
	for _, m := range up[len(up)-1].Messages {
		if strings.Contains(m.Content, "Stopped") || m.Role == "status" {
			t.Fatalf("the model was sent a status line: %+v", m)
		}
	}
}
