package service

// What a CLI agent did on its own, reported so the record is complete: the
// CLI's tools run inside the CLI, outside the desktop's gate, and each one
// is published as a tool.result with source "agent" (no tool.request came
// first), which the desktop writes to its audit log as "ran inside the
// agent, not gated". And when the CLI session must start afresh because the
// agent's instructions changed.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"jarvis/api"
	"jarvis/service/cliagent"
	"jarvis/service/config"
)

// toolSourceAgent marks a tool.result of a tool an agent's own program ran.
const toolSourceAgent = "agent"

// publishAgentTool reports one finished tool use of a CLI agent.
func (s *Service) publishAgentTool(t *turn, provider string, n int, tc cliagent.ToolCall) {
	r := api.ToolResult{ID: fmt.Sprintf("agt_%s_%d", t.id, n), OK: !tc.IsError, Source: toolSourceAgent,
		TurnID: t.id, Name: tc.Name, Arguments: tc.Input,
		Result: fmt.Sprintf("ran inside %s, not gated (%d ms)", provider, tc.DurationMs)}
	if tc.IsError {
		msg := fmt.Sprintf("%s reported that the tool failed", provider)
		r.Error = &msg
	}
	s.publish(t.sessionID, api.EventToolResult, r)
}

// cliInstructionsHash identifies what the agent is told apart from memory
// (which changes as the user works and is not worth a new CLI session):
// a CLI session resumed after it changes would keep the old instructions.
func (s *Service) cliInstructionsHash(c *config.Config, a config.Agent) string {
	sum := sha256.Sum256([]byte(BuildSystemPrompt(c, a, nil, s.skillsFor(a), "")))
	return hex.EncodeToString(sum[:8])
}
