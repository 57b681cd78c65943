package service

// The three ways into a round table: POST /v1/roundtables (progress on a
// session stream, result stored and readable with GET /v1/roundtables/{id}),
// the round_table service tool of chat agents, and agents of type
// "roundtable" whose every user message starts a deliberation.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/llm"
	"jarvis/service/roundtable"
	"jarvis/service/store"
	"jarvis/service/textclean"
	"jarvis/service/turn"
	"jarvis/tools"
)

// maxRTTimeoutSeconds bounds a request's timeout_seconds.
const maxRTTimeoutSeconds = 3600

// initRoundtable sets up round tables: the agents' HTTP client, the
// round_table tool, and the record of runs a previous process left running.
// Called by New before the routes are built.
func (s *Service) initRoundtable(ctx context.Context) {
	s.rt.client = roundtable.NewSafeClient()
	s.rt.running = map[string]context.CancelCauseFunc{}
	if n, err := s.st.InterruptRoundtableRuns(ctx); err != nil {
		s.log.Error("mark interrupted round tables", "err", err)
	} else if n > 0 {
		s.log.Warn("round tables interrupted by a restart", "count", n)
	}
	s.registerRoundtableTool()
}

// rtError maps preparation errors to HTTP errors.
func rtError(err error) error {
	var up *rtUnknownParticipants
	switch {
	case errors.As(err, &up):
		return httpapi.Errorf(http.StatusBadRequest, "unknown_participants", "%s", up.Error()).With("field", "participants").With("names", up.names)
	case errors.Is(err, errRTNoAgents):
		return httpapi.Errorf(http.StatusConflict, "no_roundtable_agents", "%s", err.Error())
	}
	return err
}

// handleRTStart is POST /v1/roundtables: it validates, picks the
// participants and the session, records the run and answers 202 at once;
// the deliberation runs in the background and reports on the session stream.
func (s *Service) handleRTStart(w http.ResponseWriter, r *http.Request) error {
	var req api.StartRoundtableRequest
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	if strings.TrimSpace(req.Content) == "" {
		return httpapi.Missing("content")
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > maxRTTimeoutSeconds {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "timeout_seconds must be between 0 (default) and %d", maxRTTimeoutSeconds).With("field", "timeout_seconds")
	}
	for i, c := range req.Constraints {
		if strings.TrimSpace(c) == "" {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "constraints[%d] is empty", i).With("field", fmt.Sprintf("constraints[%d]", i))
		}
	}
	select {
	case <-s.closing:
		return httpapi.Errorf(http.StatusServiceUnavailable, "shutting_down", "the service is shutting down")
	default:
	}
	ctx := r.Context()
	var sess store.Session
	var err error
	if req.GeneralSessionID != "" {
		if sess, err = s.liveSession(ctx, req.GeneralSessionID, "general_session_id"); err != nil {
			return err
		}
	}
	task := roundtable.Task{Content: req.Content, Context: rtContext(req.Context), Constraints: req.Constraints}
	plan, err := s.prepareRT(ctx, task, req.Participants, time.Duration(req.TimeoutSeconds)*time.Second)
	if err != nil {
		return rtError(err)
	}
	if sess.ID == "" {
		if sess, err = s.st.CreateSession(ctx, store.Session{ID: newID("g_"), AgentID: s.rtSessionAgent(), Name: "Round table: " + textclean.Snippet(req.Content, 60)}); err != nil {
			return err
		}
	}
	run, err := s.recordRT(ctx, rtSourceAPI, sess.ID, "", plan)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancelCause(context.Background())
	s.rt.mu.Lock()
	s.rt.running[run.id] = cancel
	s.rt.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.rt.mu.Lock()
			delete(s.rt.running, run.id)
			s.rt.mu.Unlock()
			cancel(nil)
		}()
		go func() { // a service shutdown interrupts the run
			select {
			case <-s.closing:
				cancel(errShutdown)
			case <-rctx.Done():
			}
		}()
		s.runRT(rctx, run)
	}()
	return httpapi.WriteJSON(w, http.StatusAccepted, api.StartRoundtableResponse{ID: run.id, GeneralSessionID: sess.ID, Participants: plan.names(), Status: store.RunRunning})
}

// handleRTCancel is POST /v1/roundtables/{id}/cancel: the partial result is
// stored as cancelled.
func (s *Service) handleRTCancel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	s.rt.mu.Lock()
	cancel, ok := s.rt.running[id]
	s.rt.mu.Unlock()
	if !ok {
		if _, err := s.st.RoundtableRun(r.Context(), id); err != nil {
			return rtRunNotFound(id, err)
		}
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"cancelled": false, "id": id})
	}
	cancel(errCancelledByUser)
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"cancelled": true, "id": id})
}

func rtRunNotFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "roundtable_not_found", "no round table %q", id).With("id", id)
	}
	return err
}

// handleRTGet is GET /v1/roundtables/{id}: the run, every agent's answers
// and the result.
func (s *Service) handleRTGet(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	run, err := s.st.RoundtableRun(r.Context(), id)
	if err != nil {
		return rtRunNotFound(id, err)
	}
	answers, err := s.st.RoundtableAnswers(r.Context(), id)
	if err != nil {
		return err
	}
	out := rtRunInfo(run)
	out.Answers = []api.RoundtableAnswer{}
	for _, a := range answers {
		out.Answers = append(out.Answers, api.RoundtableAnswer{Seq: a.Seq, Agent: a.Agent, Phase: a.Phase, Kind: a.Kind, Data: json.RawMessage(a.Data)})
	}
	out.Result = json.RawMessage("null")
	if run.Result != "" {
		out.Result = json.RawMessage(run.Result)
		var res roundtable.Result
		if err := json.Unmarshal([]byte(run.Result), &res); err == nil {
			out.Markdown = roundtable.RenderMarkdown(res)
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleRTList is GET /v1/roundtables[?general_session_id=ID&limit=N].
func (s *Service) handleRTList(w http.ResponseWriter, r *http.Request) error {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "limit must be an integer from 1 to 500").With("field", "limit")
		}
		limit = n
	}
	runs, err := s.st.RoundtableRuns(r.Context(), r.URL.Query().Get("general_session_id"), limit)
	if err != nil {
		return err
	}
	out := api.RoundtableRunList{Runs: []api.RoundtableRun{}}
	for _, run := range runs {
		out.Runs = append(out.Runs, rtRunInfo(run))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

func rtRunInfo(run store.RoundtableRun) api.RoundtableRun {
	out := api.RoundtableRun{ID: run.ID, GeneralSessionID: run.SessionID, TurnID: run.TurnID, Source: run.Source, Status: run.Status,
		Outcome: run.Outcome, Summary: run.Summary, Participants: jsonStrings(run.Participants), CreatedAt: run.CreatedAt, FinishedAt: run.FinishedAt}
	json.Unmarshal([]byte(run.Task), &out.Task)
	return out
}

// rtSessionAgent is the agent of a session made for an API round table: the
// first "roundtable" agent, else the default agent.
func (s *Service) rtSessionAgent() string {
	for _, a := range s.cfg().Agents {
		if a.Type == config.TypeRoundtable {
			return a.AgentID
		}
	}
	a, _ := s.agentForNewSession("")
	return a.AgentID
}

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
			var a tools.RoundTableArgs
			if err := tools.DecodeServiceArgs(raw, &a); err != nil {
				return "", fmt.Errorf("bad arguments: %v", err)
			}
			if strings.TrimSpace(a.Task) == "" {
				return "", errors.New("bad arguments: task is required")
			}
			plan, err := s.prepareRT(ctx, roundtable.Task{Content: a.Task, Context: rtContext(nil), Constraints: a.Constraints}, a.Participants, 0)
			if err != nil {
				return "", err
			}
			run, err := s.recordRT(ctx, rtSourceTool, t.SessionID, t.ID, plan)
			if err != nil {
				return "", err
			}
			res, md := s.runRT(ctx, run)
			if res.Status == roundtable.StatusCancelled {
				return "", errors.New("the round table was cancelled")
			}
			return md, nil
		},
	})
}

// rtAgentConfig is the "roundtable" section of a roundtable agent.
type rtAgentConfig struct {
	Participants   []string `json:"participants,omitempty"`
	Constraints    []string `json:"constraints,omitempty"`
	TimeoutSeconds int      `json:"timeoutSeconds,omitempty"`
}

func parseRTAgentConfig(raw json.RawMessage) (rtAgentConfig, error) {
	var c rtAgentConfig
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("the agent's \"roundtable\" settings are invalid (participants, constraints, timeoutSeconds): %v", err)
	}
	if c.TimeoutSeconds < 0 || c.TimeoutSeconds > maxRTTimeoutSeconds {
		return c, fmt.Errorf("roundtable.timeoutSeconds must be between 0 (default 120) and %d", maxRTTimeoutSeconds)
	}
	return c, nil
}

// runRoundtable is the runtime of "roundtable" agents: the user's message is
// the task, the rendered result the reply.
func (s *Service) runRoundtable(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	conf, err := parseRTAgentConfig(agent.Roundtable)
	if err != nil {
		return turn.Failed("invalid_config", "Agent %q: %v", agent.AgentID, err)
	}
	msgs, err := s.st.Messages(context.Background(), t.SessionID)
	if err != nil {
		return turn.Failed("internal", "could not read the conversation: %v", err)
	}
	content := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && msgs[i].TurnID == t.ID {
			content = msgs[i].Content
			break
		}
	}
	if strings.TrimSpace(content) == "" {
		return turn.Failed("empty_message", "The message is empty: there is nothing to deliberate on.")
	}
	task := roundtable.Task{Content: content, Context: rtContext(map[string]any{"agent_id": agent.AgentID}), Constraints: conf.Constraints}
	plan, err := s.prepareRT(ctx, task, conf.Participants, time.Duration(conf.TimeoutSeconds)*time.Second)
	var up *rtUnknownParticipants
	switch {
	case errors.Is(err, errRTNoAgents):
		return turn.Failed("no_roundtable_agents", "%v", err)
	case errors.As(err, &up):
		return turn.Failed("invalid_config", "Agent %q: roundtable.participants: %v", agent.AgentID, err)
	case err != nil:
		return turn.Failed("internal", "could not prepare the round table: %v", err)
	}
	run, err := s.recordRT(ctx, rtSourceAgent, sess.ID, t.ID, plan)
	if err != nil {
		return turn.Failed("internal", "could not record the round table: %v", err)
	}
	res, md := s.runRT(ctx, run)
	if res.Status == roundtable.StatusCancelled || ctx.Err() != nil {
		return turn.Failed("cancelled", "Stopped: the round table was cancelled.")
	}
	s.publish(t.SessionID, api.EventDelta, api.TextEvent{Text: md, TurnID: t.ID})
	meta, _ := json.Marshal(map[string]string{"roundtable_run_id": run.id})
	return turn.Outcome{Final: md, Last: &store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: md, Meta: string(meta)}}
}

// rtAgentStatus is the status of a "roundtable" agent in GET /v1/agents.
func (s *Service) rtAgentStatus(a config.Agent) api.AgentStatus {
	if _, err := parseRTAgentConfig(a.Roundtable); err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	rows, err := s.st.RoundtableAgents(context.Background())
	switch {
	case err != nil:
		return api.AgentStatus{State: "unknown", Detail: err.Error()}
	case len(rows) == 0:
		return api.AgentStatus{State: "unconfigured", Detail: errRTNoAgents.Error()}
	}
	bad := 0
	for _, r := range rows {
		if r.Health == "unhealthy" || r.Health == "failing" {
			bad++
		}
	}
	if bad == len(rows) {
		return api.AgentStatus{State: "failing", Detail: fmt.Sprintf("all %d registered round-table agent(s) failed their last round table", bad)}
	}
	return api.AgentStatus{State: "ok", Detail: fmt.Sprintf("%d registered round-table agent(s)", len(rows))}
}
