package service

import (
	"context"

	"jarvis/service/config"
	"jarvis/service/store"
)

// runtimeFor returns the runtime that runs an agent's turns. Each agent type
// has its own (chat: runChat in turn.go); a type this service cannot run
// answers with a clear error rather than failing silently.
func (s *Service) runtimeFor(a config.Agent) runtimeFunc {
	switch a.Type {
	case config.TypeChat:
		if isCLIProvider(s.cfg().ResolvedChat(a).Provider) {
			return s.runCLI // claude-cli, codex-cli, pi-cli (cli.go)
		}
		return s.runChat
	case config.TypeProxy:
		return s.runProxy
	case config.TypeRoundtable:
		return s.runRoundtable // roundtable_api.go
	case config.TypeExternal:
		return s.runExternal
	}
	return func(context.Context, *turn, store.Session, config.Agent) outcome {
		return failed("unsupported_agent_type", "Agent %q is of type %q, which this service does not run yet.", a.AgentID, a.Type)
	}
}
