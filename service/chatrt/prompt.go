package chatrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/prompt"
)

// The system prompts of the service's chat and CLI runs: package prompt
// builds them; the service adds its skills folder and memory section.

// memoryPromptBytes caps the memory section of a chat agent's system prompt.
const memoryPromptBytes = 12 << 10

// systemPrompt is the system prompt of a chat run of agent a offered specs.
func (rt *Runtime) systemPrompt(c *config.Config, a config.Agent, specs []llm.ToolSpec) string {
	return prompt.BuildSystemPrompt(c, a, specs, rt.skillsFor(a), rt.memorySection(rt.memoryBytesFor(a)))
}

// memoryBytesFor caps the memory section of agent a's prompt: at most a
// fifth of what its model's window leaves for requests, so that notes that
// reached memoryPromptBytes still leave room for the conversation on a small
// window (8,192 tokens), where the whole section would take most of it.
func (rt *Runtime) memoryBytesFor(a config.Agent) int {
	return min(memoryPromptBytes, rt.budgetFor(context.Background(), a).limit()*bytesPerToken/5)
}

// CLISystemPrompt is what a CLI provider's own system prompt is extended with:
// the base prompt, skills and memory. The CLI has its own tools and cannot
// call Jarvis's, so neither tools nor agents are listed.
func (rt *Runtime) CLISystemPrompt(c *config.Config, a config.Agent) string {
	return prompt.BuildSystemPrompt(c, a, nil, rt.skillsFor(a), rt.memorySection(memoryPromptBytes))
}

func (rt *Runtime) memorySection(maxBytes int) string {
	if rt.memoryPrompt == nil {
		return ""
	}
	return rt.memoryPrompt(maxBytes)
}

// skillsFor returns the skills listed in a's prompt.
func (rt *Runtime) skillsFor(a config.Agent) []prompt.Skill { return rt.skills.For(a) }

// CLIInstructionsHash identifies what a CLI agent is told apart from memory
// (which changes as the user works and is not worth a new CLI session):
// a CLI session resumed after it changes would keep the old instructions
// (package clirt starts a new one).
func (rt *Runtime) CLIInstructionsHash(c *config.Config, a config.Agent) string {
	sum := sha256.Sum256([]byte(prompt.BuildSystemPrompt(c, a, nil, rt.skillsFor(a), "")))
	return hex.EncodeToString(sum[:8])
}
