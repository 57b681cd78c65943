package service

// The system prompts of the service's chat and CLI runs: package prompt
// builds them; the service adds its skills folder and memory section.

import (
	"context"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/prompt"
)

// systemPrompt is the system prompt of a chat run of agent a offered specs.
func (s *Service) systemPrompt(c *config.Config, a config.Agent, specs []llm.ToolSpec) string {
	return prompt.BuildSystemPrompt(c, a, specs, s.skillsFor(a), s.memorySection(s.memoryBytesFor(a)))
}

// memoryBytesFor caps the memory section of agent a's prompt: at most a
// fifth of what its model's window leaves for requests, so that notes that
// reached memoryPromptBytes still leave room for the conversation on a small
// window (8,192 tokens), where the whole section would take most of it.
func (s *Service) memoryBytesFor(a config.Agent) int {
	return min(memoryPromptBytes, s.budgetFor(context.Background(), a).limit()*bytesPerToken/5)
}

// cliSystemPrompt is what a CLI provider's own system prompt is extended with:
// the base prompt, skills and memory. The CLI has its own tools and cannot
// call Jarvis's, so neither tools nor agents are listed.
func (s *Service) cliSystemPrompt(c *config.Config, a config.Agent) string {
	return prompt.BuildSystemPrompt(c, a, nil, s.skillsFor(a), s.memorySection(memoryPromptBytes))
}

func (s *Service) memorySection(maxBytes int) string {
	if s.memoryPrompt == nil {
		return ""
	}
	return s.memoryPrompt(maxBytes)
}

// skillsFor returns the skills listed in a's prompt.
func (s *Service) skillsFor(a config.Agent) []prompt.Skill { return s.skills.For(a) }
