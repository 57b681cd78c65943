package service_test

import (
	"context"
	"encoding/json"
	"errors"
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

// chatVersion sends text as a new version of turn replaces (Retry,
// Regenerate, Edit) and returns the new turn's id.
func (e *env) chatVersion(sid, replaces, text string) string {
	e.t.Helper()
	var out api.ChatResponse
	r := api.ChatRequest{GeneralSessionID: sid, Mode: "general", ReplacesTurnID: replaces, Message: api.Message{Parts: []api.MessagePart{{Type: "text", Text: text}}}}
	err := e.c.Do(context.Background(), "POST", "/v1/chat", r, &out)
	var se *api.StatusError
	if err != nil && !errors.As(err, &se) {
		e.t.Fatal(err)
	}
	if out.TurnID == "" && se != nil {
		out.TurnID, _ = se.Err.Details["turn_id"].(string)
	}
	return out.TurnID
}

// shown is the transcript as "role: text" lines.
func shown(tr []api.TranscriptMessage) []string {
	var out []string
	for _, m := range tr {
		out = append(out, m.Role+": "+m.Text)
	}
	return out
}

// Retry and Regenerate answer again in place: the user's message is not
// posted twice, the earlier answer (or error) leaves the transcript and the
// model's context, and stays reachable as a version; Edit branches there.
func TestRetryAndRegenerateReplaceTheAnswer(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	if _, err := e.c.Chat(context.Background(), sid, "first"); err != nil {
		t.Fatal(err)
	}
	failed := e.chatVersion(sid, "", "[[status 500]] second")
	if failed == "" {
		t.Fatal("no turn id for the failed turn")
	}
	// Retry: the same words again, in place of the failed turn. The
	// scripted model fails on the directive, so the retried message is
	// the directive-free edit a user would make; Regenerate below sends the
	// same text.
	retried := e.chatVersion(sid, failed, "second")
	want := []string{"user: first", "assistant: You said: first", "user: second", "assistant: You said: second"}
	if got := shown(e.transcript(sid)); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after Retry the transcript is\n%q\nwant\n%q", got, want)
	}
	regen := e.chatVersion(sid, retried, "second")
	if got := shown(e.transcript(sid)); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after Regenerate the transcript is\n%q\nwant\n%q", got, want)
	}
	up := e.upstream.Requests()
	var sent []string
	for _, m := range up[len(up)-1].Messages[1:] {
		sent = append(sent, m.Role+": "+m.Content)
	}
	if want := []string{"user: first", "assistant: You said: first", "user: second"}; strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Fatalf("Regenerate sent the model\n%q\nwant\n%q", sent, want)
	}
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Versions) != 1 || tr.Versions[0].Shown != regen || strings.Join(tr.Versions[0].Turns, ",") != strings.Join([]string{failed, retried, regen}, ",") {
		t.Fatalf("versions %+v, want [%s %s %s] showing the last", tr.Versions, failed, retried, regen)
	}
	// A message after the regenerated answer continues its branch; showing
	// the failed version shows its branch (its error line), and showing the
	// last one again brings the later message back.
	if _, err := e.c.Chat(context.Background(), sid, "third"); err != nil {
		t.Fatal(err)
	}
	show := func(turnID string) {
		t.Helper()
		if err := e.c.Do(context.Background(), "POST", "/v1/sessions/"+sid+"/versions", api.ShowVersionRequest{TurnID: turnID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	show(failed)
	got := shown(e.transcript(sid))
	if len(got) != 4 || got[2] != "user: [[status 500]] second" || !strings.HasPrefix(got[3], "status: ") {
		t.Fatalf("the failed version's branch: %q", got)
	}
	show(regen)
	if got := shown(e.transcript(sid)); len(got) != 6 || got[5] != "assistant: You said: third" {
		t.Fatalf("back on the last version: %q", got)
	}
	// Edit: the first message changed; the conversation branches there.
	e.chatVersion(sid, firstTurn(t, e, sid), "first, edited")
	if got := shown(e.transcript(sid)); strings.Join(got, "|") != "user: first, edited|assistant: You said: first, edited" {
		t.Fatalf("after Edit: %q", got)
	}
	up = e.upstream.Requests()
	if n := len(up[len(up)-1].Messages); n != 2 {
		t.Fatalf("the edited message was sent with %d messages, want system and itself", n)
	}
	// A turn of another session cannot be replaced.
	other := e.session("j2")
	r := api.ChatRequest{GeneralSessionID: other, ReplacesTurnID: regen, Message: api.Message{Parts: []api.MessagePart{{Type: "text", Text: "x"}}}}
	var se *api.StatusError
	if err := e.c.Do(context.Background(), "POST", "/v1/chat", r, nil); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("replacing another session's turn: %v", err)
	}
}

func firstTurn(t *testing.T, e *env, sid string) string {
	for _, m := range e.transcript(sid) {
		if m.Role == "user" {
			return m.TurnID
		}
	}
	t.Fatal("no user message")
	return ""
}
