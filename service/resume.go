package service

// A task's run that stopped with Jarvis while one of its calls waited in the
// Inbox goes on from that call once the user allows it (the desktop asks,
// POST /v1/tasks/runs/{id}/resume): a turn that continues the run's
// conversation, requests the same call again (allowed by the user's Inbox
// decision), gives the model its real result and goes on to the run's
// answer (service/chatrt/resume.go). When the run cannot go on (its agent or
// its model changed meanwhile, its conversation moved on), the task is
// started again instead, and the run's conversation says why.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// modelOf names the model an agent's turns are sent to (its provider, the
// server's address and the model, hashed: a session's attributes never
// carry an address): a run resumes only with the model it started with.
func (s *Service) modelOf(a config.Agent) string {
	ch := s.cfg().ResolvedChat(a)
	sum := sha256.Sum256([]byte(ch.Provider + "\x00" + ch.BaseURL + "\x00" + ch.Model))
	return hex.EncodeToString(sum[:12])
}

// runAttributes are a run's session's attributes: its task, its run and the
// model it started with.
func runAttributes(taskID, runID, model string) string {
	b, _ := json.Marshal(map[string]string{"task_id": taskID, "run_id": runID, "model": model})
	return string(b)
}

// resumeRun continues run from its call callID or, when it cannot, starts
// t again.
func (s *Service) resumeRun(ctx context.Context, t api.Task, run store.RunRow, callID string) (api.TaskResume, error) {
	if s.sched == nil {
		return api.TaskResume{}, httpapi.Errorf(http.StatusConflict, "tasks_not_run_here", "task %q cannot be run now: this Jarvis does not run tasks", t.Name)
	}
	if run.Status == "running" {
		return api.TaskResume{}, httpapi.Errorf(http.StatusConflict, "task_run_busy", "task %q's run is still going on", t.Name)
	}
	sess, agent, why := s.resumable(ctx, t, run, callID)
	if why == "" {
		tt, runFn, err := s.prepareResume(ctx, sess, callID)
		if err == nil {
			s.startRunTurn(ctx, t, run, sess.ID, tt)
			s.log.Info("tasks: run resumed", "task", t.ID, "run", run.ID, "session", sess.ID, "turn", tt.ID, "agent", agent.AgentID)
			s.settleStopped(ctx, run.ID)
			s.sched.Go(func() {
				runFn()
				s.endRun(context.WithoutCancel(ctx), t, run, sess.ID, tt)
			})
			run.Status, run.TurnID = "running", tt.ID
			return api.TaskResume{Resumed: true, Run: runView(run)}, nil
		}
		s.log.Warn("tasks: a run could not be resumed", "run", run.ID, "err", err)
		why = "its conversation could not be continued"
	}
	s.log.Info("tasks: run not resumed; the task starts again", "task", t.ID, "run", run.ID, "why", why)
	if run.SessionID != "" {
		if _, err := s.st.AddMessage(ctx, store.Message{SessionID: run.SessionID, TurnID: run.TurnID, Role: "status",
			Content: "This run could not go on from the allowed call (" + why + "); the task was started again."}); err != nil {
			s.log.Warn("tasks: a status line", "session", run.SessionID, "err", err)
		}
	}
	nr, err := s.sched.RunNow(ctx, t)
	if err != nil {
		return api.TaskResume{}, err
	}
	return api.TaskResume{Reason: why, Run: runView(nr)}, nil
}

// resumable says why run cannot go on from callID ("" when it can), with
// its session and its agent.
func (s *Service) resumable(ctx context.Context, t api.Task, run store.RunRow, callID string) (store.Session, config.Agent, string) {
	if run.SessionID == "" || run.TurnID == "" {
		return store.Session{}, config.Agent{}, "it never started"
	}
	sess, err := s.st.Session(ctx, run.SessionID)
	if err != nil {
		return sess, config.Agent{}, "its conversation is gone"
	}
	agent, err := s.agentForNewSession(t.Agent)
	if err != nil || agent.Type != config.TypeChat || agent.AgentID != sess.AgentID {
		return sess, agent, "the task's agent changed"
	}
	var attrs struct {
		Model string `json:"model"`
	}
	if json.Unmarshal([]byte(sess.Attributes), &attrs) != nil || attrs.Model != s.modelOf(agent) {
		return sess, agent, "the agent's model changed"
	}
	if tr, err := s.st.Turn(ctx, run.TurnID); err != nil || tr.Status == store.TurnDone {
		return sess, agent, "it had ended"
	}
	if head, err := s.st.BranchHead(ctx, sess.ID, ""); err != nil || head != run.TurnID {
		return sess, agent, "its conversation went on meanwhile"
	}
	msgs, err := s.st.Messages(ctx, sess.ID)
	if err != nil {
		return sess, agent, "its conversation could not be read"
	}
	for _, m := range msgs {
		if m.TurnID == run.TurnID && m.Role == "assistant" && strings.Contains(m.ToolCalls, fmt.Sprintf("%q", callID)) {
			return sess, agent, ""
		}
	}
	return sess, agent, "its conversation does not hold the allowed call"
}

// prepareResume stores the start of a turn that continues sess from the
// call callID and returns it with the function that runs it.
func (s *Service) prepareResume(ctx context.Context, sess store.Session, callID string) (*turn.Turn, func(), error) {
	select {
	case <-s.closing:
		return nil, nil, httpapi.Errorf(http.StatusServiceUnavailable, "shutting_down", "the service is shutting down")
	default:
	}
	tctx, cancel := context.WithCancelCause(context.Background())
	t := &turn.Turn{ID: newID("t_"), SessionID: sess.ID, Done: make(chan struct{}), Cancel: cancel, ResumeCall: callID,
		User: store.Message{SessionID: sess.ID}}
	text := "Resumed: the call that waited for approval was allowed."
	line := &store.Message{SessionID: sess.ID, Role: "status", Content: text}
	return s.beginTurn(ctx, tctx, cancel, t, sess, api.EventStatus, api.StatusEvent{Text: text, Kind: "resumed", TurnID: t.ID}, s.st.ResumeTurn(t.ID, line))
}

// settleStopped marks done the failure items that said run stopped with
// Jarvis: it goes on, and its outcome will be an item of its own.
func (s *Service) settleStopped(ctx context.Context, runID string) {
	rows, _, err := s.st.Inbox(ctx, false, 500)
	if err != nil {
		s.log.Warn("tasks: reading the Inbox", "err", err)
		return
	}
	yes := true
	for _, r := range rows {
		if r.RunID == runID && r.Kind == "failure" {
			if _, err := s.st.UpdateInbox(ctx, r.ID, &yes, &yes, nil, nil); err != nil {
				s.log.Warn("tasks: settling a stopped run's item", "item", r.ID, "err", err)
			}
		}
	}
}

func runView(r store.RunRow) api.TaskRun {
	return api.TaskRun{ID: r.ID, TaskID: r.TaskID, Occurrence: r.Occurrence, Status: r.Status, CaughtUp: r.CaughtUp,
		SessionID: r.SessionID, TurnID: r.TurnID, Summary: r.Summary, StartedAt: r.StartedAt}
}
