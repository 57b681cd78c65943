package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/app/mcp"
	"jarvis/tools"
)

// An MCP server's sampling/createMessage, on the desktop: a risky action
// the gate judges under mcp.SamplingTool. The prompt shows the server, the
// messages and the model that would answer (the service's preview); allowed,
// the service runs the completion with the conversation's agent's own model
// (POST /v1/sessions/{id}/sample), counted in the conversation's usage.
// Either way the audit log has its row. Headless, nobody is asked: denied
// unless a rule allows it.

// samplingArgs is what the gate judges, the prompt shows and the audit
// records of a request for a completion.
type samplingArgs struct {
	Server       string              `json:"server"`
	Agent        string              `json:"agent"`
	Model        string              `json:"model"`
	SystemPrompt string              `json:"system_prompt,omitempty"`
	Messages     []api.SampleMessage `json:"messages"`
	MaxTokens    int                 `json:"max_tokens,omitempty"`
}

// sample answers r through the gate and the service (mcp.SampleFunc).
func (r *Runner) sample(ctx context.Context, req mcp.SampleRequest) (*sdk.CreateMessageResult, error) {
	p := req.Params
	sr := api.SampleRequest{SystemPrompt: p.SystemPrompt, MaxTokens: int(p.MaxTokens)}
	for _, m := range p.Messages {
		text, err := mcp.SampleText(m)
		if err != nil {
			return nil, r.sampleRefused(ctx, req, nil, err.Error())
		}
		sr.Messages = append(sr.Messages, api.SampleMessage{Role: string(m.Role), Text: text})
	}
	preview := sr
	preview.Preview = true
	which, err := r.svc.sample(ctx, req.SessionID, preview)
	if err != nil {
		return nil, r.sampleRefused(ctx, req, &sr, friendly(err).Error())
	}
	args, err := json.Marshal(samplingArgs{Server: req.Server, Agent: which.AgentID, Model: which.Model,
		SystemPrompt: sr.SystemPrompt, Messages: sr.Messages, MaxTokens: sr.MaxTokens})
	if err != nil {
		return nil, err
	}
	var got api.SampleResponse
	out := r.gate.Handle(ctx, gate.Request{ID: samplingID(), SessionID: req.SessionID, Name: mcp.SamplingTool, Arguments: args, ProposedRisk: tools.Risky},
		func(ctx context.Context, _ string, ran json.RawMessage) (string, error) {
			// The messages as allowed: the user may have edited them in
			// the prompt; the server and the model are not theirs to change.
			var a samplingArgs
			if err := json.Unmarshal(ran, &a); err != nil {
				return "", fmt.Errorf("the request for a completion: %w", err)
			}
			if a.Server != req.Server || a.Agent != which.AgentID || a.Model != which.Model {
				return "", fmt.Errorf("the server, agent and model of a request for a completion cannot be changed")
			}
			sr := api.SampleRequest{Messages: a.Messages, SystemPrompt: a.SystemPrompt, MaxTokens: a.MaxTokens}
			var err error
			if got, err = r.svc.sample(ctx, req.SessionID, sr); err != nil {
				return "", fmt.Errorf("the model did not answer: %w", friendly(err))
			}
			return got.Text, nil
		})
	switch {
	case out.Decision.Action != gate.Run || out.Withdrawn:
		r.logger.Warn("mcp: a server's request for a completion was not allowed", "server", req.Server, "session", req.SessionID, "reason", out.Decision.Reason)
		return nil, mcp.Decline("declined: " + out.Decision.Reason)
	case !out.OK:
		return nil, fmt.Errorf("%s", out.Error)
	}
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: got.Text}, Model: got.Model, Role: "assistant", StopReason: got.StopReason}, nil
}

// samplingID names a request for a completion in the audit log (it has no
// tool call of its own).
func samplingID() string { return "sampling_" + strings.ToLower(rand.Text()[:16]) }

// sampleRefused records a request for a completion refused before the gate
// could judge it (the conversation's agent has no model Jarvis can run, or a
// message is not text) and returns the server's error.
func (r *Runner) sampleRefused(ctx context.Context, req mcp.SampleRequest, sr *api.SampleRequest, why string) error {
	args, _ := json.Marshal(samplingArgs{Server: req.Server})
	if sr != nil {
		args, _ = json.Marshal(samplingArgs{Server: req.Server, SystemPrompt: sr.SystemPrompt, Messages: sr.Messages, MaxTokens: sr.MaxTokens})
	}
	e := audit.Entry{SessionID: req.SessionID, ToolCallID: samplingID(), Tool: mcp.SamplingTool, Arguments: args,
		ProposedRisk: string(tools.Risky), Class: string(tools.Forbidden), Decision: audit.Denied, DecidedBy: audit.ByPolicy, Reason: why}
	if _, err := r.log.Append(context.WithoutCancel(ctx), e); err != nil {
		r.logger.Error("audit append failed", "tool", mcp.SamplingTool, "err", err)
	}
	r.logger.Warn("mcp: a server's request for a completion was refused", "server", req.Server, "session", req.SessionID, "reason", why)
	return mcp.Decline("declined: " + why)
}

// sample is POST /v1/sessions/{id}/sample.
func (s svc) sample(ctx context.Context, sessionID string, r api.SampleRequest) (api.SampleResponse, error) {
	var out api.SampleResponse
	err := s.c.Do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/sample", r, &out)
	return out, err
}
