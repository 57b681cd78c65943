package service

// The acp runtime: chat agents whose provider is "acp" are Agent Client
// Protocol agents (package acpagent), one process per Jarvis session kept
// between turns. The agent's stream becomes assistant.delta, thinking and
// status events (kind "tool", and "plan" for its plan); everything it asks
// of its client goes to the desktop as a tool.request answered through
// POST /v1/tools/result, like a model's tool call: its permission requests
// as agent_permission (source "service": the gate's answer is the
// permission), its file reads and writes as read_file and write_file (the
// desktop's executor serves them within its workspace, through the gate),
// its terminals as run_command (run to their end by the desktop).
// So the gate, the policy, the prompt and the audit log decide, and any
// client of the service can play the gate.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/acpagent"
	"jarvis/service/config"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/tools"
)

// acpAgents are the running ACP agents, by session.
type acpAgents struct {
	mu     sync.Mutex
	bySess map[string]*acpEntry
	// closing are the agents being stopped in the background (replaced,
	// or their session deleted or cleared); closeACP waits for them.
	closing sync.WaitGroup
}

type acpEntry struct {
	a   *acpagent.Agent
	key string // the config it was started with: a change restarts it
}

// acpAgent returns the session's agent, starting afresh when its config changed.
func (s *Service) acpAgent(sessionID string, agent config.Agent, ch config.Chat) (*acpagent.Agent, error) {
	dir := ch.WorkDir
	if dir == "" {
		dir = filepath.Join(s.dataDir, "acp", agent.AgentID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("could not create the agent's working folder: %w", err)
		}
	}
	var env []string
	for k, v := range ch.Env {
		if ref, ok := strings.CutPrefix(v, "secret:"); ok {
			if s.secrets == nil {
				return nil, fmt.Errorf("env %s names the secret %q, and there is no secret store", k, ref)
			}
			val, err := s.secrets.Get(ref)
			if err != nil {
				return nil, fmt.Errorf("env %s: the secret %q cannot be read: %w", k, ref, err)
			}
			v = val
		}
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	keyB, _ := json.Marshal([]any{ch.Command, ch.Args, env, dir})
	key := string(keyB)
	s.acp.mu.Lock()
	defer s.acp.mu.Unlock()
	if s.acp.bySess == nil {
		s.acp.bySess = map[string]*acpEntry{}
	}
	if e := s.acp.bySess[sessionID]; e != nil {
		if e.key == key {
			return e.a, nil
		}
		s.acp.closing.Go(func() { _ = e.a.Close() })
	}
	a, err := acpagent.New(acpagent.Options{Command: ch.Command, Args: ch.Args, Env: env, WorkDir: dir, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.acp.bySess[sessionID] = &acpEntry{a: a, key: key}
	return a, nil
}

// dropACP stops the session's agent and its whole process group, in the
// background: the session was deleted or cleared, so its conversation with
// the agent is over; a later turn starts a new one.
func (s *Service) dropACP(sessionID string) {
	s.acp.mu.Lock()
	e := s.acp.bySess[sessionID]
	delete(s.acp.bySess, sessionID)
	s.acp.mu.Unlock()
	if e != nil {
		s.acp.closing.Go(func() { _ = e.a.Close() })
	}
}

// closeACP ends every ACP agent process (service shutdown).
func (s *Service) closeACP() {
	s.acp.mu.Lock()
	entries := s.acp.bySess
	s.acp.bySess = nil
	s.acp.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(func() { _ = e.a.Close() })
	}
	wg.Wait()
	s.acp.closing.Wait()
}

// acpStatus is an ACP agent's status for GET /v1/agents: ok when its
// command is found, unconfigured (saying which command) when it is not.
func (s *Service) acpStatus(a config.Agent) api.AgentStatus {
	ch := s.cfg().ResolvedChat(a)
	if _, err := exec.LookPath(ch.Command); err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: fmt.Sprintf("the agent's command %q was not found: %v", ch.Command, err)}
	}
	return api.AgentStatus{State: "ok"}
}

// runACP is the runtime of chat agents with the acp provider.
func (s *Service) runACP(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	ch := s.cfg().ResolvedChat(agent)
	a, err := s.acpAgent(t.SessionID, agent, ch)
	if err != nil {
		return turn.Failed("acp_failed", "Agent %q (acp): %v", agent.AgentID, err)
	}
	c := s.cfg()
	in := acpagent.Input{Text: t.User.Content, Instructions: s.cliSystemPrompt(c, agent), InstructionsKey: s.cliInstructionsHash(c, agent),
		History: func() []acpagent.Message { return s.acpHistory(t) }}
	host := &acpHost{s: s, t: t, agent: agent}
	res, err := a.Prompt(ctx, in, host, func(ev acpagent.Event) {
		switch {
		case ev.TextDelta != "":
			s.publish(t.SessionID, api.EventDelta, api.TextEvent{Text: ev.TextDelta, TurnID: t.ID})
		case ev.ThoughtDelta != "":
			t.Stats.AddThinking(ev.ThoughtDelta)
		case ev.Status != "":
			s.publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: agent.DisplayName + " " + ev.Status, Kind: "tool", TurnID: t.ID})
		case ev.Plan != nil:
			steps := make([]api.PlanStep, 0, len(ev.Plan))
			for _, e := range ev.Plan {
				steps = append(steps, api.PlanStep(e))
			}
			s.publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: planText(ev.Plan), Kind: "plan", TurnID: t.ID, Plan: steps})
		}
	})
	if note := acpSessionNote(agent.DisplayName, res); note != "" {
		s.publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: note, Kind: "agent_status", TurnID: t.ID})
	}
	if err != nil {
		if strings.TrimSpace(res.Text) != "" { // keep what the user saw
			if _, serr := s.st.AddMessage(context.Background(), store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: res.Text, Meta: `{"acp":{"partial":true}}`}); serr != nil {
				s.log.Error("store partial acp answer", "err", serr)
			}
		}
		var ae *acpagent.AuthRequiredError
		switch {
		case ctx.Err() != nil:
			return turn.Failed("cancelled", "Stopped: the turn was cancelled, and the agent's processes were ended.")
		case errors.As(err, &ae):
			return turn.Failed("acp_auth_required", "Agent %q: %v", agent.AgentID, err)
		case errors.Is(err, acpagent.ErrProtocol):
			return turn.Failed("acp_protocol", "Agent %q broke the Agent Client Protocol (%v); the next turn starts it again.", agent.AgentID, err)
		case errors.Is(err, acpagent.ErrExited):
			return turn.Failed("acp_exited", "Agent %q: %v", agent.AgentID, err)
		}
		return turn.Failed("acp_failed", "Agent %q: %v", agent.AgentID, err)
	}
	if strings.TrimSpace(res.Text) == "" {
		return turn.Failed("acp_failed", "Agent %q ended the turn (%s) without a reply.", agent.AgentID, res.StopReason)
	}
	answer := store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: res.Text, Meta: fmt.Sprintf(`{"acp":{"sessionId":%q,"stopReason":%q}}`, res.SessionID, res.StopReason)}
	return turn.Outcome{Final: res.Text, Last: &answer}
}

func planText(plan []acpagent.PlanEntry) string {
	var b strings.Builder
	b.WriteString("Plan:")
	for _, e := range plan {
		mark := "[ ]"
		switch e.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[~]"
		}
		fmt.Fprintf(&b, "\n%s %s", mark, e.Content)
	}
	return b.String()
}

// acpHost serves an ACP agent's requests through the desktop's gate.
type acpHost struct {
	s     *Service
	t     *turn.Turn
	agent config.Agent
}

func (h *acpHost) RequestPermission(ctx context.Context, p acpagent.Permission) (bool, error) {
	args := tools.AgentPermissionArgs{Agent: h.agent.AgentID, Title: p.Title, Kind: p.Kind, Locations: p.Locations}
	if p.RawInput != nil {
		args.Input, _ = json.Marshal(p.RawInput)
	}
	b, _ := json.Marshal(args)
	r := h.s.askDesktop(ctx, h.t, tools.AgentPermissionTool, b, string(tools.Risky), p.Title, "service", h.agent.DisplayName+" (its own tool)")
	return r.OK, resultErr(r)
}

func (h *acpHost) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	b, _ := json.Marshal(map[string]string{"path": path})
	r := h.s.askDesktop(ctx, h.t, "read_file", b, "safe", h.agent.DisplayName+" reads a file", "", "")
	if err := resultErr(r); err != nil {
		return "", err
	}
	text := r.Result
	if line > 0 || limit > 0 {
		lines := strings.Split(text, "\n")
		start := min(max(line-1, 0), len(lines))
		end := len(lines)
		if limit > 0 && start+limit < end {
			end = start + limit
		}
		text = strings.Join(lines[start:end], "\n")
	}
	return text, nil
}

func (h *acpHost) WriteTextFile(ctx context.Context, path, content string) error {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	r := h.s.askDesktop(ctx, h.t, "write_file", b, "risky", h.agent.DisplayName+" writes a file", "", "")
	return resultErr(r)
}

// RunCommand is the agent's terminal/create: one run_command through the
// desktop's gate (it prompts unless a rule allows the program; the desktop
// runs it confined where it can), run to its end.
func (h *acpHost) RunCommand(ctx context.Context, c acpagent.Command) (acpagent.CommandOutput, error) {
	b, _ := json.Marshal(struct {
		Program string   `json:"program"`
		Args    []string `json:"args,omitempty"`
		Cwd     string   `json:"cwd"`
	}{c.Program, c.Args, c.Cwd})
	r := h.s.askDesktop(ctx, h.t, "run_command", b, "risky", h.agent.DisplayName+" runs a command", "", "")
	if err := resultErr(r); err != nil {
		return acpagent.CommandOutput{}, err
	}
	var cr tools.CommandResult
	if err := json.Unmarshal([]byte(r.Result), &cr); err != nil {
		return acpagent.CommandOutput{}, fmt.Errorf("the desktop's run_command result is not a command result: %w", err)
	}
	return acpagent.CommandOutput{Output: cr.Stdout + cr.Stderr, Truncated: cr.Truncated, ExitCode: cr.ExitCode}, nil
}

func resultErr(r api.ToolResult) error {
	if r.OK {
		return nil
	}
	if r.Error != nil {
		return errors.New(*r.Error)
	}
	return errors.New("denied")
}

// askDesktop sends one tool.request for the turn and waits for the
// desktop's result, the tool-result timeout (denied: fail closed) or ctx's
// end (cancelled), as a model's tool calls do (runToolCalls).
func (s *Service) askDesktop(ctx context.Context, t *turn.Turn, name string, args json.RawMessage, risk, reason, source, target string) api.ToolResult {
	id := newID("tc_")
	ch := make(chan indexedResult, 1)
	w := &toolWait{sessionID: t.SessionID, ch: ch, args: args}
	if err := s.st.CreateToolCall(context.Background(), store.ToolCall{ID: id, SessionID: t.SessionID, TurnID: t.ID, Name: name, Arguments: string(args), Risk: risk, Reason: reason}); err != nil {
		s.log.Error("store tool call", "err", err)
	}
	s.mu.Lock()
	s.waits[id] = w
	s.mu.Unlock()
	s.publish(t.SessionID, api.EventToolRequest, api.ToolCall{ID: id, Name: name, Arguments: args, Risk: risk, Reason: reason, TurnID: t.ID, Source: source, Target: target, DelegatedBy: t.Delegators()})
	limit := s.cfg().ToolResultTimeout()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var r api.ToolResult
	select {
	case ir := <-ch:
		r = ir.r
	case <-timer.C:
		if er, ok := s.expireWait(id, w, "timeout", fmt.Sprintf("denied: no decision from the desktop within %s (fail closed)", limit)); ok {
			r = er
		} else {
			r = (<-ch).r
		}
	case <-ctx.Done():
		if er, ok := s.expireWait(id, w, "cancelled", "cancelled: the turn was stopped"); ok {
			r = er
		} else {
			r = (<-ch).r
		}
	}
	r.ID, r.TurnID = id, t.ID
	s.publish(t.SessionID, api.EventToolResult, r)
	return r
}
