package service

import (
	"crypto/sha256"
	"encoding/hex"

	"jarvis/service/config"
	"jarvis/service/prompt"
)

// cliInstructionsHash identifies what a CLI agent is told apart from memory
// (which changes as the user works and is not worth a new CLI session):
// a CLI session resumed after it changes would keep the old instructions
// (package clirt starts a new one).
func (s *Service) cliInstructionsHash(c *config.Config, a config.Agent) string {
	sum := sha256.Sum256([]byte(prompt.BuildSystemPrompt(c, a, nil, s.skillsFor(a), "")))
	return hex.EncodeToString(sum[:8])
}
