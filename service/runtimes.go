package service

import (
	"context"
	"encoding/json"
	"errors"
	"jarvis/service/acprt"

	"jarvis/api"
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
// type to the runtime that runs it. Runtimes in their own package receive
// the environment (turn.Env), never the service; those still written as
// methods of the service (chat, ACP) are adapted
// by methodRuntime until they move out.
func (s *Service) registerRuntimes(ctx context.Context) {
	env := s.runtimeEnv()
	s.waiter = toolwait.New(env)
	describeChat := func(a config.Agent, info *api.AgentInfo) {
		ch := s.cfg().ResolvedChat(a)
		info.Provider, info.Model = ch.Provider, ch.Model
	}
	s.runtimes.Register(config.TypeChat, methodRuntime{run: s.runChat, status: s.chatStatus, describe: describeChat})
	s.runtimes.Register(turn.KindCLI, clirt.New(env, s.cliSystemPrompt, s.cliInstructionsHash)) // claude-cli, codex-cli, pi-cli
	s.acp = acprt.New(env, acprt.Options{Waiter: s.waiter, Instructions: s.cliSystemPrompt, InstructionsKey: s.cliInstructionsHash})
	s.runtimes.Register(turn.KindACP, s.acp)
	s.rtr = roundtablert.New(ctx, env, roundtablert.Options{Red: s.red, PutSecret: s.putSecret, DeleteSecret: s.deleteSecret, ProviderFor: s.providerFor,
		DefaultAgent: func() string { a, _ := s.agentForNewSession(""); return a.AgentID }})
	s.runtimes.Register(config.TypeRoundtable, s.rtr)
	s.registerRoundtableTool()
	s.ext = externalrt.New(env, &s.base, s.red)
	s.runtimes.Register(config.TypeExternal, s.ext)
}

// runtimeEnv is what the service gives a runtime package.
func (s *Service) runtimeEnv() turn.Env {
	return turn.Env{Store: s.st, Publisher: turn.PublisherFunc(s.publish), Config: s.cfg, Log: s.log, Now: s.now,
		Secrets: s.secrets, HTTPClient: s.hc, BaseURL: s.base.URL, DataDir: s.dataDir, Events: s.hub, Version: Version}
}

// runtimeFor returns the function that runs an agent's turns; a type this
// service cannot run answers with a clear error rather than failing
// silently. runChat waits for the turn's start to be stored (t.Stored) once
// its model call has begun; the others wait before they begin.
func (s *Service) runtimeFor(a config.Agent) runtimeFunc {
	rt, ok := s.runtimes.For(s.cfg(), a)
	if !ok {
		return func(context.Context, *turn.Turn, store.Session, config.Agent) turn.Outcome {
			return turn.Failed("unsupported_agent_type", "Agent %q is of type %q, which this service does not run yet.", a.AgentID, a.Type)
		}
	}
	if _, own := rt.(interface{ waitsForStart() }); own {
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

// methodRuntime is a runtime written as methods of the service.
type methodRuntime struct {
	run      runtimeFunc
	status   func(config.Agent) api.AgentStatus
	describe func(config.Agent, *api.AgentInfo)        // nil: nothing to add
	outbound func(*config.Config, config.Agent) string // nil: its agents are in the process
	load     func(config.Agent)                        // nil: no settings to parse
}

func (m methodRuntime) Load(a config.Agent) {
	if m.load != nil {
		m.load(a)
	}
}

// waitsForStart: run waits for the turn's start itself (runChat once its
// model call has begun, the others through afterStart).
func (methodRuntime) waitsForStart() {}

func (m methodRuntime) Outbound(c *config.Config, a config.Agent) string {
	if m.outbound == nil {
		return ""
	}
	return m.outbound(c, a)
}

func (m methodRuntime) Run(ctx context.Context, t *turn.Turn, sess store.Session, a config.Agent) turn.Outcome {
	return m.run(ctx, t, sess, a)
}

func (m methodRuntime) Status(a config.Agent) api.AgentStatus { return m.status(a) }

// Validate is the agent's status when it says the agent is not configured.
func (m methodRuntime) Validate(a config.Agent) error {
	if st := m.status(a); st.State == "unconfigured" {
		return errors.New(st.Detail)
	}
	return nil
}

func (m methodRuntime) Describe(a config.Agent, info *api.AgentInfo) {
	if m.describe != nil {
		m.describe(a, info)
	}
}

// chatStatus is a chat agent's status: unconfigured (saying how to
// configure it) when it has no usable model provider.
func (s *Service) chatStatus(a config.Agent) api.AgentStatus {
	if _, _, err := s.providerFor(a); err != nil {
		var le *llm.Error
		if errors.As(err, &le) && le.Code == llm.CodeNotConfigured {
			return api.AgentStatus{State: "unconfigured", Detail: le.Message}
		}
		return api.AgentStatus{State: "unknown"}
	}
	return api.AgentStatus{State: "ok"}
}

// registerRoundtableTool offers chat agents the round_table tool, run by
// the round-table runtime.
func (s *Service) registerRoundtableTool() {
	def, _ := tools.Lookup("round_table") // its schema, shared with the desktop's gate
	s.registerServerTool(serverTool{
		spec: llm.ToolSpec{Name: def.Name, Description: def.Description, Parameters: def.Parameters},
		// A round table sends the task to every registered expert agent
		// (other programs, possibly other machines): always through the gate.
		outbound: func(*config.Config, config.Agent, json.RawMessage) (string, bool) {
			return "the round table's registered expert agents (other programs, possibly other machines)", true
		},
		capabilities: def.Capabilities,
		run: func(ctx context.Context, t *turn.Turn, _ config.Agent, raw json.RawMessage) (string, error) {
			return s.rtr.RunTool(ctx, t, raw)
		},
	})
}

// dropACP ends the session's ACP agent (the session was deleted or cleared).
func (s *Service) dropACP(sessionID string) { s.acp.Drop(sessionID) }
