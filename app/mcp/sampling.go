package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"jarvis/tools"
)

// Sampling: a server's sampling/createMessage asks the client's model for a
// completion. Jarvis answers it only for a conversation, and only through
// Options.Sample (the desktop's gate, which asks the user and records the
// request in the audit log, then the conversation's agent's own model).
// The conversation is the one whose tool call is running on the server when
// it asks (a server samples while it works on a call): Call notes the
// session of each call it runs (WithSession).

// SamplingTool is the name the gate judges, prompts for and records a
// server's request for a completion under. It is no server's tool (an MCP
// tool's name is mcp__<server>__<tool>) and is never offered to models.
const SamplingTool = "mcp_sampling"

// SampleRequest is a server's request for a completion, with the
// conversation it is answered for.
type SampleRequest struct {
	Server    string // the name as written in mcp.json
	SessionID string
	Params    *sdk.CreateMessageParams
}

// SampleFunc answers a SampleRequest; an error reaches the server as the
// request's error.
type SampleFunc func(ctx context.Context, r SampleRequest) (*sdk.CreateMessageResult, error)

// SamplingDefinition is SamplingTool as the gate's prompt names it.
func SamplingDefinition() tools.Definition {
	return tools.Definition{Name: SamplingTool, Title: "MCP server › completion from your model",
		Description: "An MCP server asks for a completion from the conversation's model, with the messages below. Allowed, the conversation's agent's model answers them and the server gets the answer; it counts in the conversation's usage.",
		Risk:        tools.Risky}
}

// AssessSampling classifies a SamplingTool call: risky (it prompts unless a
// rule allows it), its arguments as they are.
func AssessSampling(args json.RawMessage) tools.Assessment {
	var v struct {
		Server string `json:"server"`
	}
	if err := json.Unmarshal(args, &v); err != nil || v.Server == "" {
		return tools.Assessment{Risk: tools.Forbidden, Reason: "a request for a completion names no server"}
	}
	return tools.Assessment{Risk: tools.Risky, Canonical: args}
}

type sessionKey struct{}

// WithSession marks ctx as the context of a call made for a conversation:
// a server that asks for a completion while the call runs is answered for
// that conversation.
func WithSession(ctx context.Context, sessionID string) context.Context {
	return context.WithValue(ctx, sessionKey{}, sessionID)
}

// sampling is the Manager's answerer of sampling requests and the
// conversations whose calls are running, by server.
type sampling struct {
	mu      sync.Mutex
	answer  SampleFunc
	running map[string]map[string]int // server → session → calls running
}

// SetSample sets who answers servers' requests for a completion; nil
// declines them all (the answer of `jarvis mcp` and of tests).
func (m *Manager) SetSample(f SampleFunc) {
	m.smp.mu.Lock()
	m.smp.answer = f
	m.smp.mu.Unlock()
}

// during notes a call on server for ctx's conversation until the returned
// function is called.
func (p *sampling) during(server string, ctx context.Context) func() {
	sid, _ := ctx.Value(sessionKey{}).(string)
	if sid == "" {
		return func() {}
	}
	p.mu.Lock()
	if p.running == nil {
		p.running = map[string]map[string]int{}
	}
	if p.running[server] == nil {
		p.running[server] = map[string]int{}
	}
	p.running[server][sid]++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.running[server][sid]--; p.running[server][sid] == 0 {
			delete(p.running[server], sid)
		}
	}
}

// Decline is the error a server gets when its request for a completion is
// not answered: code -1, as the specification's "User rejected sampling
// request", with the reason in words.
func Decline(reason string) error {
	return &jsonrpc.Error{Code: -1, Message: reason}
}

// sample answers the server's sampling/createMessage: for the one
// conversation whose call runs on it, through the Manager's answerer.
func (s *server) sample(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	label := s.cfg.Label
	if label == "" {
		label = s.cfg.Name
	}
	smp := &s.m.smp
	smp.mu.Lock()
	answer := smp.answer
	var sessions []string
	for sid := range smp.running[s.cfg.Name] {
		sessions = append(sessions, sid)
	}
	smp.mu.Unlock()
	var why string
	switch {
	case answer == nil:
		why = "declined: this Jarvis does not answer requests for a completion"
	case len(sessions) == 0:
		why = "declined: no conversation is waiting on a call of this server, so there is no model to answer with"
	case len(sessions) > 1:
		why = "declined: calls of several conversations are running on this server, and Jarvis cannot tell which one asks"
	}
	if why != "" {
		s.m.log.Warn("mcp: a server asked for a completion; "+why, "server", label)
		return nil, Decline(why)
	}
	if ask := s.ctx; ask != nil { // stopping the server withdraws the request
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(ask, cancel)()
	}
	return answer(ctx, SampleRequest{Server: label, SessionID: sessions[0], Params: p})
}

// SampleText is the text of a sampling message, or an error for content
// Jarvis does not send to models from a server (images, audio).
func SampleText(m *sdk.SamplingMessage) (string, error) {
	switch c := m.Content.(type) {
	case *sdk.TextContent:
		return c.Text, nil
	case nil:
		return "", nil
	default:
		kind := strings.TrimPrefix(fmt.Sprintf("%T", c), "*mcp.")
		return "", fmt.Errorf("a message carries %s; only text is sent to the model", strings.ToLower(strings.TrimSuffix(kind, "Content")))
	}
}
