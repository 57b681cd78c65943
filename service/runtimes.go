package service

import (
	"context"

	"jarvis/service/config"
	"jarvis/service/store"
)

// runtimeFor returns the runtime that runs an agent's turns. Each agent type
// has its own (chat: runChat in turn.go); a type this service cannot run
// answers with a clear error rather than failing silently. runChat waits for
// the turn's start to be stored (t.stored) once its model call has begun;
// the others wait before they begin.
func (s *Service) runtimeFor(a config.Agent) runtimeFunc {
	switch a.Type {
	case config.TypeChat:
		if s.cfg().ResolvedChat(a).Provider == config.ProviderACP {
			return afterStart(s.runACP) // acp.go
		}
		if isCLIProvider(s.cfg().ResolvedChat(a).Provider) {
			return afterStart(s.runCLI) // claude-cli, codex-cli, pi-cli (cli.go)
		}
		return s.runChat
	case config.TypeProxy:
		return afterStart(s.runProxy)
	case config.TypeRoundtable:
		return afterStart(s.runRoundtable) // roundtable_api.go
	case config.TypeExternal:
		return afterStart(s.runExternal)
	}
	return func(context.Context, *turn, store.Session, config.Agent) outcome {
		return failed("unsupported_agent_type", "Agent %q is of type %q, which this service does not run yet.", a.AgentID, a.Type)
	}
}

// afterStart runs f once the turn's start is stored; runTurn abandons a turn
// whose start failed.
func afterStart(f runtimeFunc) runtimeFunc {
	return func(ctx context.Context, t *turn, sess store.Session, a config.Agent) outcome {
		if _, err := t.stored(); err != nil {
			return outcome{}
		}
		return f(ctx, t, sess, a)
	}
}
