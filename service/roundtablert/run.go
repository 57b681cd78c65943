package roundtablert

// Round tables in the service: the one path every way in takes (the
// POST /v1/roundtables API, the round_table tool, "roundtable" agents).
// prepareRT chooses the participants and reads their keys; runRT records the
// run, runs the engine with progress published on the session's stream,
// and stores the result with every agent's answers in the same transaction
// as the roundtable.result event.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/redact"
	"jarvis/service/roundtable"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// Run sources.
const (
	rtSourceAPI   = "api"
	rtSourceTool  = "tool"
	rtSourceAgent = "agent"
)

// errRTNoAgents: nothing is registered, so no round table can be held.
var errRTNoAgents = errors.New("no round-table agents are registered: register one with POST /api/v1/agents (see the agent protocol, docs/protocols/roundtable-agents.md)")

// rtPlan is a round table ready to run.
type rtPlan struct {
	task     roundtable.Task
	agents   []roundtable.Agent
	excluded []roundtable.Exclusion // refused before the run (a key that cannot be read)
	warnings []string
}

// timeoutOf is how long the table waits for one call to a: its own
// registered timeout (Agent.Timeout, set by prepareRT), else the default.
func timeoutOf(a roundtable.Agent) time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return roundtable.DefaultCallTimeout
}

// longestTimeout is the longest call timeout among the participants.
func (p rtPlan) longestTimeout() time.Duration {
	var d time.Duration
	for _, a := range p.agents {
		d = max(d, timeoutOf(a))
	}
	return d
}

// names returns every proposed participant, refused ones included.
func (p rtPlan) names() []string {
	var out []string
	for _, a := range p.agents {
		out = append(out, a.Name)
	}
	for _, x := range p.excluded {
		out = append(out, x.Agent)
	}
	return out
}

// rtUnknownParticipants is returned for names that are not registered.
type rtUnknownParticipants struct{ names []string }

func (e *rtUnknownParticipants) Error() string {
	return fmt.Sprintf("unknown round-table agent(s): %s (GET /api/v1/agents lists the registered ones)", strings.Join(e.names, ", "))
}

// prepareRT chooses the participants: the named ones, or those
// SelectParticipants finds relevant, or every registered agent when none
// is. Each agent is waited for its own registered timeout (default 120 s),
// or for timeout when it is set.
func (rt *Runtime) prepareRT(ctx context.Context, task roundtable.Task, names []string, timeout time.Duration) (rtPlan, error) {
	p := rtPlan{task: task}
	rows, err := rt.env.Store.RoundtableAgents(ctx)
	if err != nil {
		return p, err
	}
	if len(rows) == 0 {
		return p, errRTNoAgents
	}
	byName := map[string]store.RoundtableAgent{}
	var all []roundtable.Agent
	for _, r := range rows {
		byName[r.Name] = r
		all = append(all, roundtable.Agent{Name: r.Name, Domain: r.Domain, BaseURL: r.BaseURL, Capabilities: jsonStrings(r.Capabilities), Mode: r.Mode})
	}
	var chosen []roundtable.Agent
	if len(names) > 0 {
		var unknown []string
		for _, n := range names {
			n = strings.TrimSpace(n)
			i := slices.IndexFunc(all, func(a roundtable.Agent) bool { return a.Name == n })
			switch {
			case i < 0:
				unknown = append(unknown, n)
			case !slices.ContainsFunc(chosen, func(a roundtable.Agent) bool { return a.Name == n }):
				chosen = append(chosen, all[i])
			}
		}
		if len(unknown) > 0 {
			return p, &rtUnknownParticipants{names: unknown}
		}
	} else {
		chosen = roundtable.SelectParticipants(task.Content, all)
		if len(chosen) == 0 {
			chosen = all
			p.warnings = append(p.warnings, fmt.Sprintf("No registered agent's domain or capabilities matched the task; all %d registered agent(s) were asked.", len(all)))
		}
	}
	for _, a := range chosen {
		row := byName[a.Name]
		key, err := rt.rtKey(row)
		if err != nil {
			p.excluded = append(p.excluded, roundtable.Exclusion{Phase: roundtable.PhaseSelection, Agent: a.Name, Kind: roundtable.ExcludedInvalidAgent,
				Reason: "its API key cannot be read: " + err.Error()})
			continue
		}
		a.APIKey = key
		a.Timeout = time.Duration(row.TimeoutSeconds) * time.Second
		if timeout > 0 {
			a.Timeout = timeout
		}
		a.Timeout = timeoutOf(a)
		p.agents = append(p.agents, a)
	}
	return p, nil
}

// rtRun is a recorded run about to start.
type rtRun struct {
	id, sessionID, turnID, source string
	plan                          rtPlan
}

// recordRT stores the run as running.
func (rt *Runtime) recordRT(ctx context.Context, source, sessionID, turnID string, p rtPlan) (rtRun, error) {
	run := rtRun{id: turn.NewID("rt_"), sessionID: sessionID, turnID: turnID, source: source, plan: p}
	run.plan.task.ID = run.id
	task, err := json.Marshal(run.plan.task)
	if err != nil {
		return run, httpapi.Errorf(http.StatusBadRequest, "invalid_field", "context cannot be encoded as JSON: %v", err).With("field", "context")
	}
	_, err = rt.env.Store.CreateRoundtableRun(ctx, store.RoundtableRun{ID: run.id, SessionID: sessionID, TurnID: turnID, Source: source,
		Task: string(task), Participants: jsonList(p.names())})
	return run, err
}

// runRT deliberates and stores the result; it returns the result and its
// Markdown rendering. ctx ending stops the deliberation (the partial result
// is stored as cancelled, or interrupted when the service is stopping).
func (rt *Runtime) runRT(ctx context.Context, run rtRun) (roundtable.Result, string) {
	p := run.plan
	synth := rt.rtSynthesizer()
	synthName := "deterministic"
	if l, ok := synth.(*llmSynthesizer); ok {
		synthName = "llm:" + l.model
	}
	tr := &rtTracker{rt: rt, run: run, synthName: synthName, gone: map[string]bool{}, skipped: map[roundtable.Phase]map[string]bool{}}
	tr.publish(api.RoundtableProgressEvent{Type: "started", At: rt.env.Now().UTC().Format(time.RFC3339Nano), Participants: p.names(),
		TimeoutSeconds: p.longestTimeout().Seconds(), Message: fmt.Sprintf("round table with %d agent(s): %s", len(p.names()), strings.Join(p.names(), ", "))})
	for _, x := range p.excluded {
		tr.progress(roundtable.Progress{Type: roundtable.ProgressAgentFailed, TaskID: run.id, Phase: x.Phase, Agent: x.Agent, Message: x.Reason, At: rt.env.Now(), Exclusion: &x})
	}

	var res roundtable.Result
	eng, err := roundtable.New(roundtable.Options{Client: rt.client, Synthesizer: synth, Logger: rt.env.Log.With("round_table", run.id), Now: rt.env.Now})
	if err == nil {
		stop := tr.startWaitTicker()
		res, err = eng.Run(ctx, p.task, p.agents, tr.progress)
		stop()
	}
	status := string(res.Status)
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), turn.ErrShutdown):
		status = store.RunInterrupted
	case ctx.Err() != nil:
		status = string(roundtable.StatusCancelled)
	default:
		status = "failed"
		rt.env.Log.Error("round table failed", "run", run.id, "err", err)
		res = roundtable.Result{TaskID: run.id, Task: p.task.Content, Status: "failed", Summary: "The round table could not run: " + err.Error(),
			RecommendedDirection: "No recommendation: the round table could not run."}
	}
	// Agents refused before the run are part of the record.
	if len(p.excluded) > 0 {
		res.Exclusions = append(slices.Clone(p.excluded), res.Exclusions...)
		if res.Status == roundtable.StatusNoParticipants {
			res.Summary = fmt.Sprintf("No round table was held: all %d proposed participant(s) were refused (see exclusions).", len(p.names()))
		}
	}
	res.Warnings = append(slices.Clone(p.warnings), res.Warnings...)
	// An agent's answer or error may echo its key (package redact).
	res = redact.JSON(rt.red, res)
	md := roundtable.RenderMarkdown(res)
	rt.noteRTHealth(res, p)

	resJSON, _ := json.Marshal(res)
	answers := rtAnswers(res)
	ev := api.RoundtableResultEvent{RunID: run.id, TurnID: run.turnID, Status: status, Outcome: string(res.Outcome), Summary: res.Summary,
		Markdown: md, Result: resJSON}
	if _, err := rt.env.Events.PublishWith(context.Background(), run.sessionID, api.EventRoundtableResult, ev,
		rt.env.Store.FinishRoundtableRun(run.id, status, string(res.Outcome), res.Summary, jsonList(p.names()), string(resJSON), answers)); err != nil {
		rt.env.Log.Error("store round-table result", "run", run.id, "err", err)
	}
	rt.env.Log.Info("round table finished", "run", run.id, "source", run.source, "status", status, "outcome", string(res.Outcome),
		"participants", len(p.names()), "ms", res.Timings.TotalMS)
	return res, md
}

// rtAnswers lists every agent's answers and every exclusion of a result.
func rtAnswers(res roundtable.Result) []store.RoundtableAnswer {
	var out []store.RoundtableAnswer
	add := func(agent string, phase roundtable.Phase, kind string, v any) {
		b, _ := json.Marshal(v)
		out = append(out, store.RoundtableAnswer{Agent: agent, Phase: string(phase), Kind: kind, Data: string(b)})
	}
	for _, a := range res.Analyses {
		add(a.AgentName, roundtable.PhaseAnalyze, "analysis", a)
	}
	for _, c := range res.Challenges {
		add(c.Agent, roundtable.PhaseChallenge, "challenge", c)
	}
	for _, c := range res.Concessions {
		add(c.Agent, roundtable.PhaseChallenge, "concession", c)
	}
	for _, v := range res.Votes {
		add(v.AgentName, roundtable.PhaseVote, "vote", v)
	}
	for _, x := range res.Exclusions {
		add(x.Agent, x.Phase, "exclusion", x)
	}
	return out
}

// noteRTHealth records against each registration how it did.
func (rt *Runtime) noteRTHealth(res roundtable.Result, p rtPlan) {
	if res.Status == roundtable.StatusCancelled || res.Status == "" {
		return
	}
	ctx := context.Background()
	for _, name := range p.names() {
		health, detail := "ok", ""
		for _, x := range res.Exclusions {
			if x.Agent != name {
				continue
			}
			switch x.Kind {
			case roundtable.ExcludedSkipped, roundtable.ExcludedCancelled, roundtable.ExcludedUnhealthy:
				continue
			case roundtable.ExcludedTimeout, roundtable.ExcludedBlockedAddress:
				health, detail = "unhealthy", fmt.Sprintf("%s: %s", x.Phase, x.Reason)
			default:
				if health == "ok" {
					health, detail = "failing", fmt.Sprintf("%s: %s", x.Phase, x.Reason)
				}
			}
		}
		if err := rt.env.Store.SetRoundtableAgentHealth(ctx, name, health, detail); err != nil {
			rt.env.Log.Warn("record round-table agent health", "agent", name, "err", err)
		}
	}
}

// rtTracker turns engine progress into roundtable.progress events and knows
// whom a phase is still waiting for, and until when, so that every wait is
// visible.
type rtTracker struct {
	rt        *Runtime
	run       rtRun
	synthName string

	mu         sync.Mutex
	gone       map[string]bool                      // out for the rest of the run
	skipped    map[roundtable.Phase]map[string]bool // refused in a phase before it started
	phase      roundtable.Phase
	pending    []string
	until      map[string]time.Time // agent → end of its wait in this phase
	phaseStart time.Time            // monotonic, for "waited"
	phaseWall  time.Time            // the service clock's phase start
}

// waits fills ev's waiting fields from the pending agents.
func (tr *rtTracker) waits(ev *api.RoundtableProgressEvent) {
	ev.WaitingFor = slices.Clone(tr.pending)
	if len(tr.until) == 0 {
		return
	}
	ev.WaitingUntil = map[string]string{}
	var longest time.Duration
	for _, n := range tr.pending {
		if u, ok := tr.until[n]; ok {
			ev.WaitingUntil[n] = u.UTC().Format(time.RFC3339)
			longest = max(longest, u.Sub(tr.phaseWall))
		}
	}
	ev.TimeoutSeconds = longest.Seconds()
}

// waitList names the pending agents with the end of each one's wait.
func (tr *rtTracker) waitList() string {
	parts := make([]string, 0, len(tr.pending))
	for _, n := range tr.pending {
		if u, ok := tr.until[n]; ok {
			parts = append(parts, fmt.Sprintf("%s (until %s)", n, u.UTC().Format("15:04:05Z")))
		} else {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, ", ")
}

func (tr *rtTracker) publish(ev api.RoundtableProgressEvent) {
	ev.RunID, ev.TurnID = tr.run.id, tr.run.turnID
	tr.rt.env.Publisher.Publish(tr.run.sessionID, api.EventRoundtableProgress, ev)
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// progress is the engine's callback: quick, never blocking (publish only enqueues).
func (tr *rtTracker) progress(p roundtable.Progress) {
	if p.Type == roundtable.ProgressResult {
		return // the result has its own event, stored with the run
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ev := api.RoundtableProgressEvent{Type: string(p.Type), TaskID: p.TaskID, Phase: string(p.Phase), Agent: p.Agent, Message: p.Message,
		At: p.At.UTC().Format(time.RFC3339Nano)}
	switch p.Type {
	case roundtable.ProgressPhaseStarted:
		tr.phase, tr.phaseStart, tr.phaseWall, tr.pending, tr.until = p.Phase, time.Now(), p.At, nil, nil
		if p.Phase == roundtable.PhaseSynthesis {
			tr.pending = []string{tr.synthName}
		} else {
			tr.until = map[string]time.Time{}
			for _, a := range tr.run.plan.agents {
				if !tr.gone[a.Name] && !tr.skipped[p.Phase][a.Name] {
					tr.pending = append(tr.pending, a.Name)
					tr.until[a.Name] = p.At.Add(timeoutOf(a))
				}
			}
		}
		tr.waits(&ev)
		if len(tr.until) > 0 {
			ev.Message = fmt.Sprintf("%s: waiting for %s", p.Phase, tr.waitList())
		}
	case roundtable.ProgressPhaseFinished:
		tr.pending = nil
	case roundtable.ProgressSynthesis:
		tr.pending = nil
		ev.Synthesis = rawJSON(p.Synthesis)
	case roundtable.ProgressAgentResponded, roundtable.ProgressVote:
		tr.pending = slices.DeleteFunc(tr.pending, func(n string) bool { return n == p.Agent })
		if p.Vote != nil {
			ev.Vote = rawJSON(p.Vote)
		}
	case roundtable.ProgressAgentFailed:
		tr.pending = slices.DeleteFunc(tr.pending, func(n string) bool { return n == p.Agent })
		if x := p.Exclusion; x != nil {
			ev.Exclusion = rawJSON(x)
			switch x.Kind {
			case roundtable.ExcludedTimeout, roundtable.ExcludedBlockedAddress, roundtable.ExcludedInvalidAgent, roundtable.ExcludedUnhealthy:
				tr.gone[x.Agent] = true
			}
			if x.Phase != tr.phase || x.Kind == roundtable.ExcludedSkipped {
				if tr.skipped[x.Phase] == nil {
					tr.skipped[x.Phase] = map[string]bool{}
				}
				tr.skipped[x.Phase][x.Agent] = true
			}
		}
	}
	tr.publish(ev)
}

// startWaitTicker publishes a "waiting" event while a phase waits, every
// quarter of the shortest call timeout (at least 250 ms, at most 10 s).
func (tr *rtTracker) startWaitTicker() (stop func()) {
	shortest := roundtable.DefaultCallTimeout
	for _, a := range tr.run.plan.agents {
		shortest = min(shortest, timeoutOf(a))
	}
	every := min(max(shortest/4, 250*time.Millisecond), 10*time.Second)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			tr.mu.Lock()
			if len(tr.pending) > 0 && time.Since(tr.phaseStart) >= every {
				waited := time.Since(tr.phaseStart).Round(100 * time.Millisecond)
				ev := api.RoundtableProgressEvent{Type: "waiting", Phase: string(tr.phase), At: tr.rt.env.Now().UTC().Format(time.RFC3339Nano),
					Message: fmt.Sprintf("%s: still waiting for %s after %s", tr.phase, tr.waitList(), waited)}
				tr.waits(&ev)
				tr.publish(ev)
			}
			tr.mu.Unlock()
		}
	})
	return func() { close(done); wg.Wait() }
}

// rtContext is the task context sent to agents: the caller's, with
// "source": "round_table" unless the caller set one.
func rtContext(c map[string]any) map[string]any {
	out := map[string]any{"source": "round_table"}
	maps.Copy(out, c)
	return out
}
