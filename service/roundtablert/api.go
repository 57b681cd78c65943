package roundtablert

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
	"jarvis/service/roundtable"
	"jarvis/service/store"
	"jarvis/service/textclean"
	"jarvis/service/turn"
	"jarvis/tools"
)

// maxRTTimeoutSeconds bounds a request's timeout_seconds.
const maxRTTimeoutSeconds = 3600

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
func (rt *Runtime) handleRTStart(w http.ResponseWriter, r *http.Request) error {
	var req api.StartRoundtableRequest
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
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
	case <-rt.closing:
		return httpapi.Errorf(http.StatusServiceUnavailable, "shutting_down", "the service is shutting down")
	default:
	}
	ctx := r.Context()
	var sess store.Session
	var err error
	if req.GeneralSessionID != "" {
		if sess, err = httpapi.LiveSession(ctx, rt.env.Store, req.GeneralSessionID, "general_session_id"); err != nil {
			return err
		}
	}
	task := roundtable.Task{Content: req.Content, Context: rtContext(req.Context), Constraints: req.Constraints}
	plan, err := rt.prepareRT(ctx, task, req.Participants, time.Duration(req.TimeoutSeconds)*time.Second)
	if err != nil {
		return rtError(err)
	}
	if sess.ID == "" {
		if sess, err = rt.env.Store.CreateSession(ctx, store.Session{ID: turn.NewID("g_"), AgentID: rt.rtSessionAgent(), Name: "Round table: " + textclean.Snippet(req.Content, 60)}); err != nil {
			return err
		}
	}
	run, err := rt.recordRT(ctx, rtSourceAPI, sess.ID, "", plan)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancelCause(context.Background())
	rt.mu.Lock()
	select {
	case <-rt.closing: // closed since the check above: the run is stored as interrupted
		rt.mu.Unlock()
		cancel(turn.ErrShutdown)
		rt.runRT(rctx, run)
		return httpapi.Errorf(http.StatusServiceUnavailable, "shutting_down", "the service is shutting down")
	default:
	}
	rt.running[run.id] = cancel
	rt.wg.Add(1) // under mu, so never after Close's Wait began
	rt.mu.Unlock()
	go func() {
		defer rt.wg.Done()
		defer func() {
			rt.mu.Lock()
			delete(rt.running, run.id)
			rt.mu.Unlock()
			cancel(nil)
		}()
		go func() { // a service shutdown interrupts the run
			select {
			case <-rt.closing:
				cancel(turn.ErrShutdown)
			case <-rctx.Done():
			}
		}()
		rt.runRT(rctx, run)
	}()
	return httpapi.WriteJSON(w, http.StatusAccepted, api.StartRoundtableResponse{ID: run.id, GeneralSessionID: sess.ID, Participants: plan.names(), Status: store.RunRunning})
}

// handleRTCancel is POST /v1/roundtables/{id}/cancel: the partial result is
// stored as cancelled.
func (rt *Runtime) handleRTCancel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rt.mu.Lock()
	cancel, ok := rt.running[id]
	rt.mu.Unlock()
	if !ok {
		if _, err := rt.env.Store.RoundtableRun(r.Context(), id); err != nil {
			return rtRunNotFound(id, err)
		}
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"cancelled": false, "id": id})
	}
	cancel(errCancelled)
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
func (rt *Runtime) handleRTGet(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	run, err := rt.env.Store.RoundtableRun(r.Context(), id)
	if err != nil {
		return rtRunNotFound(id, err)
	}
	answers, err := rt.env.Store.RoundtableAnswers(r.Context(), id)
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
func (rt *Runtime) handleRTList(w http.ResponseWriter, r *http.Request) error {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "limit must be an integer from 1 to 500").With("field", "limit")
		}
		limit = n
	}
	runs, err := rt.env.Store.RoundtableRuns(r.Context(), r.URL.Query().Get("general_session_id"), limit)
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
func (rt *Runtime) rtSessionAgent() string {
	for _, a := range rt.env.Config().Agents {
		if a.Type == config.TypeRoundtable {
			return a.AgentID
		}
	}
	return rt.opts.DefaultAgent()
}

// RunTool runs the round_table service tool of a chat agent's turn: raw
// is its arguments, the answer the result rendered in Markdown.
func (rt *Runtime) RunTool(ctx context.Context, t *turn.Turn, raw json.RawMessage) (string, error) {
	var a tools.RoundTableArgs
	if err := tools.DecodeServiceArgs(raw, &a); err != nil {
		return "", fmt.Errorf("bad arguments: %v", err)
	}
	if strings.TrimSpace(a.Task) == "" {
		return "", errors.New("bad arguments: task is required")
	}
	plan, err := rt.prepareRT(ctx, roundtable.Task{Content: a.Task, Context: rtContext(nil), Constraints: a.Constraints}, a.Participants, 0)
	if err != nil {
		return "", err
	}
	run, err := rt.recordRT(ctx, rtSourceTool, t.SessionID, t.ID, plan)
	if err != nil {
		return "", err
	}
	res, md := rt.runRT(ctx, run)
	if res.Status == roundtable.StatusCancelled {
		return "", errors.New("the round table was cancelled")
	}
	return md, nil
}

// rtAgentConfig is the "roundtable" section of a roundtable agent.
type rtAgentConfig struct {
	Participants   []string `json:"participants,omitempty"`
	Constraints    []string `json:"constraints,omitempty"`
	TimeoutSeconds int      `json:"timeoutSeconds,omitempty"`
}

func parseRTAgentConfig(a config.Agent) (rtAgentConfig, error) {
	var c rtAgentConfig
	raw := a.Roundtable
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

// Run is the turn of a "roundtable" agent: the user's message is the task,
// the rendered result the reply.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	conf, err := rt.conf.Get(agent)
	if err != nil {
		return turn.Failed("invalid_config", "Agent %q: %v", agent.AgentID, err)
	}
	msgs, err := rt.env.Store.Messages(context.Background(), t.SessionID)
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
	plan, err := rt.prepareRT(ctx, task, conf.Participants, time.Duration(conf.TimeoutSeconds)*time.Second)
	var up *rtUnknownParticipants
	switch {
	case errors.Is(err, errRTNoAgents):
		return turn.Failed("no_roundtable_agents", "%v", err)
	case errors.As(err, &up):
		return turn.Failed("invalid_config", "Agent %q: roundtable.participants: %v", agent.AgentID, err)
	case err != nil:
		return turn.Failed("internal", "could not prepare the round table: %v", err)
	}
	run, err := rt.recordRT(ctx, rtSourceAgent, sess.ID, t.ID, plan)
	if err != nil {
		return turn.Failed("internal", "could not record the round table: %v", err)
	}
	res, md := rt.runRT(ctx, run)
	if res.Status == roundtable.StatusCancelled || ctx.Err() != nil {
		return turn.Failed("cancelled", "Stopped: the round table was cancelled.")
	}
	rt.env.Publisher.Publish(t.SessionID, api.EventDelta, api.TextEvent{Text: md, TurnID: t.ID})
	meta, _ := json.Marshal(map[string]string{"roundtable_run_id": run.id})
	return turn.Outcome{Final: md, Last: &store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: md, Meta: string(meta)}}
}

// Status is the status of a "roundtable" agent in GET /v1/agents.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	if _, err := rt.conf.Get(a); err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	rows, err := rt.env.Store.RoundtableAgents(context.Background())
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
