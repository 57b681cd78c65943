package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/app/mcp"
	"jarvis/internal/testpeer"
)

// samplingCall is the scripted model's call of server-everything's tool
// that asks the client for a completion (sampling/createMessage).
const samplingCall = `[[tool mcp__every__trigger-sampling-request {"prompt":"name a colour","maxTokens":40}]]`

// samplingPolicy allows the tool itself, so that only its request for a
// completion prompts.
const samplingPolicy = `{"rules":[{"tool":"mcp__every__trigger-sampling-request","action":"allow"}]}`

// samplingText is what server-everything sends as the user's message.
const samplingText = "Resource trigger-sampling-request context: name a colour"

// turnFinal replays the session's stream up to its first assistant.final.
func turnFinal(t *testing.T, d *realDesktop, sid string) api.TextEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var final api.TextEvent
	found := errors.New("found")
	err := d.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
		if ev.Type != api.EventFinal {
			return nil
		}
		if err := json.Unmarshal(ev.Data, &final); err != nil {
			return err
		}
		return found
	})
	if !errors.Is(err, found) {
		t.Fatalf("no assistant.final on the stream: %v", err)
	}
	return final
}

func decisiveValue(p gate.Prompt, name string) string {
	for _, f := range p.Decisive {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// TestMCPSamplingAllowed: server-everything asks for a completion while the
// conversation's call of its tool runs; the gate's prompt shows the server,
// the model and the messages; allowed once, the conversation's model (the
// scripted upstream) answers, the tool's result carries its text, the turn's
// usage counts the extra request, and the audit log has the row.
func TestMCPSamplingAllowed(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy)
	sid := d.session(t)
	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	pr := d.waitPrompt(t)
	if pr.Tool != mcp.SamplingTool || pr.SessionID != sid {
		t.Fatalf("prompt for %q in %q, want %q in %q", pr.Tool, pr.SessionID, mcp.SamplingTool, sid)
	}
	if decisiveValue(pr, "server") != "every" || decisiveValue(pr, "model") != "m" || decisiveValue(pr, "user") != samplingText ||
		decisiveValue(pr, "instructions") != "You are a helpful test server." {
		t.Fatalf("the prompt does not show the server, model and messages: %+v", pr.Decisive)
	}
	if err := d.app.ResolvePrompt(pr.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "You said: "+samplingText)

	reqs := d.model.Requests()
	var sampled *openai.ChatCompletionRequest
	prompt := 0
	for i, r := range reqs {
		prompt += testpeer.CountTokens(r)
		if n := len(r.Messages); n == 2 && r.Messages[0].Content == "You are a helpful test server." && r.Messages[1].Content == samplingText {
			sampled = &reqs[i]
		}
	}
	if sampled == nil || len(reqs) != 3 {
		t.Fatalf("%d upstream requests, the completion among them: %v", len(reqs), sampled != nil)
	}
	if len(sampled.Tools) != 0 || sampled.MaxTokens != 40 && sampled.MaxCompletionTokens != 40 {
		t.Fatalf("the completion was sent with tools %d, max tokens %d/%d", len(sampled.Tools), sampled.MaxTokens, sampled.MaxCompletionTokens)
	}
	final := turnFinal(t, d, sid)
	if final.Usage == nil || final.Usage.Requests != 3 || final.Usage.PromptTokens != prompt {
		t.Fatalf("the turn's usage %+v does not count the completion (3 requests, %d prompt tokens)", final.Usage, prompt)
	}

	row := d.auditRow(t, sid, mcp.SamplingTool)
	if row.Decision != audit.Allowed || row.DecidedBy != audit.ByUser || row.Result != "You said: "+samplingText ||
		!strings.Contains(string(row.Arguments), `"model":"m"`) || !strings.Contains(string(row.Arguments), `"server":"every"`) {
		t.Fatalf("audit row %+v", row)
	}
}

// TestMCPSamplingDenied: refused in the prompt, the server gets an error
// and no completion reaches the model; the audit log says who refused.
func TestMCPSamplingDenied(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy)
	sid := d.session(t)
	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	pr := d.waitPrompt(t)
	if pr.Tool != mcp.SamplingTool {
		t.Fatalf("prompt for %q", pr.Tool)
	}
	if err := d.app.ResolvePrompt(pr.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "declined")
	for _, r := range d.model.Requests() {
		if len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Content == samplingText {
			t.Fatal("a refused completion reached the model")
		}
	}
	row := d.auditRow(t, sid, mcp.SamplingTool)
	if row.Decision != audit.Denied || row.DecidedBy != audit.ByUser {
		t.Fatalf("audit row %+v", row)
	}
	call := d.auditRow(t, sid, "mcp__every__trigger-sampling-request")
	if call.Decision != audit.Allowed || !strings.Contains(call.Error, "declined") {
		t.Fatalf("the tool's row does not carry the server's error: %+v", call)
	}
}

// TestMCPSamplingHeadless: with nobody to ask, the request is denied and
// recorded as the headless gate's decision.
func TestMCPSamplingHeadless(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy, func(o *ToolRunnerOptions) { o.Headless = true })
	sid := d.session(t)
	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "declined")
	row := d.auditRow(t, sid, mcp.SamplingTool)
	if row.Decision != audit.Denied || row.DecidedBy != audit.ByHeadless {
		t.Fatalf("audit row %+v", row)
	}
	if n := len(d.model.Requests()); n != 2 {
		t.Fatalf("%d upstream requests; the completion must not be one", n)
	}
}

// TestMCPSamplingWithoutConversation: a call made outside a conversation
// (no session) gets the server a clear refusal.
func TestMCPSamplingWithoutConversation(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy)
	_, err := d.runner.mcp.Call(context.Background(), "direct-1", "mcp__every__trigger-sampling-request", []byte(`{"prompt":"x","maxTokens":5}`), nil)
	if err == nil || !strings.Contains(err.Error(), "no conversation is waiting on a call of this server") {
		t.Fatalf("err %v", err)
	}
}

// TestMCPSamplingSessionGrant: "allow for this conversation" covers that
// server's later requests in the conversation, and "always" would save a
// rule for that server only.
func TestMCPSamplingSessionGrant(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy)
	sid := d.session(t)
	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	pr := d.waitPrompt(t)
	if len(pr.Scopes) != 1 || pr.Scopes[0].Label != "requests for a completion from the MCP server every" || pr.Scopes[0].Rule.Args["server"] != "every" {
		t.Fatalf("the always scope %+v", pr.Scopes)
	}
	if err := d.app.ResolvePrompt(pr.ID, "session", ""); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "You said: "+samplingText)
	if err := d.app.Send(sid, strings.Replace(samplingCall, "a colour", "a fruit", 1)); err != nil {
		t.Fatal(err)
	}
	// The tool's second call asks (it reaches the outside world after the
	// first one's untrusted result); its request for a completion does not.
	if pr := d.waitPrompt(t); pr.Tool != "mcp__every__trigger-sampling-request" {
		t.Fatalf("prompt for %q", pr.Tool)
	} else if err := d.app.ResolvePrompt(pr.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "You said: Resource trigger-sampling-request context: name a fruit")
	row := d.auditRow(t, sid, mcp.SamplingTool)
	if row.Decision != audit.Allowed || row.DecidedBy != audit.BySession {
		t.Fatalf("the second request's row %+v", row)
	}
}

// TestMCPSamplingEditedMessages: messages the user edited in the prompt are
// the ones the model reads (and the audit records); the model cannot be
// changed there.
func TestMCPSamplingEditedMessages(t *testing.T) {
	d := everythingDesktop(t, samplingPolicy)
	sid := d.session(t)
	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	pr := d.waitPrompt(t)
	edited := strings.Replace(string(pr.Arguments), "name a colour", "name a tree", 1)
	if edited == string(pr.Arguments) {
		t.Fatalf("arguments %s", pr.Arguments)
	}
	if err := d.app.ResolvePrompt(pr.ID, "once", edited); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "You said: Resource trigger-sampling-request context: name a tree")
	row := d.auditRow(t, sid, mcp.SamplingTool)
	if row.Decision != audit.Allowed || !strings.Contains(string(row.EditedArguments), "name a tree") {
		t.Fatalf("audit row %+v", row)
	}

	if err := d.app.Send(sid, samplingCall); err != nil {
		t.Fatal(err)
	}
	if pr := d.waitPrompt(t); pr.Tool != "mcp__every__trigger-sampling-request" { // tainted by the first result
		t.Fatalf("prompt for %q", pr.Tool)
	} else if err := d.app.ResolvePrompt(pr.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	pr = d.waitPrompt(t)
	if err := d.app.ResolvePrompt(pr.ID, "once", strings.Replace(string(pr.Arguments), `"model":"m"`, `"model":"gpt-x"`, 1)); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "cannot be changed")
}
