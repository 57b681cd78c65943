package chatrt

import (
	"errors"
	"net/http"
	"strings"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/llm"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// POST /v1/sessions/{id}/sample: one completion an MCP server asked the
// desktop for (sampling/createMessage), after the user allowed it there. It
// runs with the session's agent's own provider and model, without tools,
// memory or the conversation (the server's messages only), and its usage
// counts in the session's running turn: a server samples while one of the
// turn's tool calls runs on it.

// maxSampleMessages bounds a sampling request's messages.
const maxSampleMessages = 100

func (rt *Runtime) handleSample(w http.ResponseWriter, r *http.Request) error {
	sess, err := rt.opts.LiveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	var req api.SampleRequest
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	msgs, err := sampleMessages(req)
	if err != nil {
		return err
	}
	agent, ok := rt.env.Config().Agent(sess.AgentID)
	if !ok {
		return httpapi.Errorf(http.StatusConflict, "unknown_agent", "the session's agent %q is no longer configured", sess.AgentID)
	}
	if turn.KindOf(rt.env.Config(), agent) != config.TypeChat {
		return httpapi.Errorf(http.StatusConflict, "sampling_unsupported", "agent %q runs its own model (type %s); only chat agents answer a tool's request for a completion", agent.AgentID, agent.Type)
	}
	provider, model, err := rt.opts.ProviderFor(agent)
	if err != nil {
		e := llmErrorEvent(err)
		return httpapi.Errorf(http.StatusServiceUnavailable, e.Code, "%s", e.Message)
	}
	out := api.SampleResponse{AgentID: agent.AgentID, Model: model}
	if req.Preview {
		return httpapi.WriteJSON(w, http.StatusOK, out)
	}
	t := rt.opts.Running(sess.ID)
	if t == nil {
		return httpapi.Errorf(http.StatusConflict, "no_running_turn", "the conversation has no turn running: a tool asks for a completion only while one of its calls runs")
	}
	reply, err := provider.Stream(r.Context(), llm.Request{Model: model, MaxTokens: req.MaxTokens, Messages: msgs}, func(string) {})
	if err != nil {
		e := llmErrorEvent(err)
		if e.Code == llm.CodeUpstream && !errors.As(err, new(*llm.Error)) {
			return err
		}
		return httpapi.Errorf(http.StatusBadGateway, e.Code, "the model did not answer: %s", e.Message)
	}
	u := store.Usage{Requests: 1, PromptTokens: reply.Usage.PromptTokens, CompletionTokens: reply.Usage.CompletionTokens}
	t.AddSampled(u)
	out.Text, out.StopReason = reply.Text, "endTurn"
	if reply.FinishReason == "length" {
		out.StopReason = "maxTokens"
	}
	out.Usage = &api.ReplyUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Requests: 1}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// sampleMessages checks a sampling request and turns it into the model's
// messages: the server's system prompt first, then its messages.
func sampleMessages(req api.SampleRequest) ([]llm.Message, error) {
	if len(req.Messages) == 0 {
		return nil, httpapi.Missing("messages")
	}
	if len(req.Messages) > maxSampleMessages {
		return nil, httpapi.Errorf(http.StatusBadRequest, "invalid_field", "a request for a completion has at most %d messages", maxSampleMessages).With("field", "messages")
	}
	if req.MaxTokens < 0 {
		return nil, httpapi.Errorf(http.StatusBadRequest, "invalid_field", "the most tokens to write cannot be negative").With("field", "max_tokens")
	}
	var out []llm.Message
	if s := strings.TrimSpace(req.SystemPrompt); s != "" {
		out = append(out, llm.Message{Role: "system", Content: s})
	}
	for _, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, httpapi.Errorf(http.StatusBadRequest, "invalid_field", "a message's role is %q; it must be user or assistant", m.Role).With("field", "messages.role")
		}
		out = append(out, llm.Message{Role: m.Role, Content: m.Text})
	}
	return out, nil
}
