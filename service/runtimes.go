package service

import (
	"context"
	"encoding/json"

	"jarvis/service/a2art"
	"jarvis/service/acprt"
	"jarvis/service/chatrt"
	"jarvis/service/clirt"
	"jarvis/service/config"
	"jarvis/service/externalrt"
	"jarvis/service/llm"
	"jarvis/service/roundtablert"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/tools"
)

// registerRuntimes fills the registry: the one place that maps an agent
// type to the runtime that runs it. Every runtime is a package of its own
// that receives the environment (turn.Env) and its Options, never the
// service; the root passes what stays its own (the turn lifecycle, the
// model providers, sessions) as function fields.
func (s *Service) registerRuntimes(ctx context.Context) {
	env := s.runtimeEnv()
	s.waiter = toolwait.New(env)
	s.chat = chatrt.New(env, chatrt.Options{Waiter: s.waiter, ProviderFor: s.providerFor, Memory: s.mem, Catalog: s.catalog, Runtimes: &s.runtimes,
		StartTurn: s.startTurnWith, Running: s.running, Claim: s.claim, Release: s.release, LiveSession: s.liveSession})
	s.runtimes.Register(config.TypeChat, s.chat)
	s.runtimes.Register(turn.KindCLI, clirt.New(env, s.chat.CLISystemPrompt, s.chat.CLIInstructionsHash)) // claude-cli, codex-cli, pi-cli
	s.acp = acprt.New(env, acprt.Options{Waiter: s.waiter, Instructions: s.chat.CLISystemPrompt, InstructionsKey: s.chat.CLIInstructionsHash, Catalog: s.catalog,
		PutSecret: s.putSecret, Red: s.red, Bridge: s.mcpBridge})
	s.runtimes.Register(turn.KindACP, s.acp)
	s.rtr = roundtablert.New(ctx, env, roundtablert.Options{Red: s.red, PutSecret: s.putSecret, DeleteSecret: s.deleteSecret, ProviderFor: s.providerFor,
		DefaultAgent: func() string { a, _ := s.agentForNewSession(""); return a.AgentID }})
	s.runtimes.Register(config.TypeRoundtable, s.rtr)
	s.registerRoundtableTool()
	s.registerTaskTool() // background.go
	s.ext = externalrt.New(env, &s.base, s.red)
	s.runtimes.Register(config.TypeExternal, s.ext)
	s.a2a = a2art.New(env, a2art.Options{Waiter: s.waiter})
	s.runtimes.Register(config.TypeA2A, s.a2a)
}

// runtimeEnv is what the service gives a runtime package.
func (s *Service) runtimeEnv() turn.Env {
	return turn.Env{Store: s.st, Publisher: turn.PublisherFunc(s.publish), Config: s.cfg, Log: s.log, Now: s.now,
		Secrets: s.secrets, HTTPClient: s.hc, BaseURL: s.base.URL, DataDir: s.dataDir, Events: s.hub, Version: Version, Sandbox: s.sandbox}
}

// runtimeFor returns the function that runs an agent's turns; a type this
// service cannot run answers with a clear error rather than failing
// silently. A turn.StartAwaiter (the chat runtime, once its model call has
// begun) waits for the turn's start to be stored (t.Stored) itself; the
// others wait before they begin.
func (s *Service) runtimeFor(a config.Agent) runtimeFunc {
	rt, ok := s.runtimes.For(s.cfg(), a)
	if !ok {
		return func(context.Context, *turn.Turn, store.Session, config.Agent) turn.Outcome {
			return turn.Failed("unsupported_agent_type", "Agent %q is of type %q, which this service does not run yet.", a.AgentID, a.Type)
		}
	}
	if _, own := rt.(turn.StartAwaiter); own {
		return rt.Run // waits as it needs (afterStart where it must)
	}
	return afterStart(rt.Run)
}

// afterStart runs f once the turn's start is stored; runTurn abandons a turn
// whose start failed.
func afterStart(f runtimeFunc) runtimeFunc {
	return func(ctx context.Context, t *turn.Turn, sess store.Session, a config.Agent) turn.Outcome {
		if _, err := t.Stored(); err != nil {
			return turn.Outcome{}
		}
		return f(ctx, t, sess, a)
	}
}

// registerRoundtableTool offers chat agents the round_table tool, run by
// the round-table runtime.
func (s *Service) registerRoundtableTool() {
	def, _ := tools.Lookup("round_table") // its schema, shared with the desktop's gate
	s.chat.RegisterTool(chatrt.ServerTool{
		Spec: llm.ToolSpec{Name: def.Name, Description: def.Description, Parameters: def.Parameters},
		// A round table sends the task to every registered expert agent
		// (other programs, possibly other machines): always through the gate.
		Outbound: func(*config.Config, config.Agent, json.RawMessage) (string, bool) {
			return "the round table's registered expert agents (other programs, possibly other machines)", true
		},
		Capabilities: def.Capabilities,
		Run: func(ctx context.Context, t *turn.Turn, _ config.Agent, raw json.RawMessage) (string, error) {
			return s.rtr.RunTool(ctx, t, raw)
		},
	})
}

// dropACP ends the session's ACP agent (the session was deleted or cleared).
func (s *Service) dropACP(sessionID string) { s.acp.Drop(sessionID) }
