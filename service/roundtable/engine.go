package roundtable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults from docs/protocols/roundtable-agents.md.
const (
	DefaultCallTimeout = 120 * time.Second
	DefaultMaxBody     = 5 << 20
	DefaultMaxField    = 50_000
	DefaultMaxItems    = 100
)

// Options configure an Engine. Zero values take the defaults.
type Options struct {
	// Client calls the agents. Nil means NewSafeClient(). A caller's client
	// is copied with redirects disabled; its transport should dial through
	// netguard.Dialer to keep the link-local/metadata guard.
	Client *http.Client
	// CallTimeout bounds each call to an agent whose own Timeout is 0
	// (default 120 s).
	CallTimeout time.Duration
	// MaxBody caps a response body in bytes (default 5 MB).
	MaxBody int64
	// MaxField caps every string field in characters (runes) (default 50,000).
	MaxField int
	// MaxItems caps each list in a response (observations, challenges,
	// conditions...) (default 100).
	MaxItems int
	// MaxConcurrency bounds the calls in flight within one phase; 0 means one
	// per agent. 1 calls agents one after another (a baseline for benchmarks).
	MaxConcurrency int
	// Synthesizer builds the synthesis; nil means DeterministicSynthesizer.
	Synthesizer Synthesizer
	// Logger receives warnings and errors about agents; nil discards.
	Logger *slog.Logger
	// Now is the clock for timestamps and phase timings; nil means time.Now.
	Now func() time.Time
}

// Engine runs deliberations. See the package doc for concurrency rules.
type Engine struct {
	call     caller
	maxItems int
	maxConc  int
	synth    Synthesizer
	fallback DeterministicSynthesizer
	log      *slog.Logger
	now      func() time.Time
	sc       *scanner
}

// New validates the options, fills the defaults and returns an Engine.
func New(opts Options) (*Engine, error) {
	switch {
	case opts.CallTimeout < 0:
		return nil, fmt.Errorf("%w: negative CallTimeout", ErrInvalidOptions)
	case opts.MaxBody < 0:
		return nil, fmt.Errorf("%w: negative MaxBody", ErrInvalidOptions)
	case opts.MaxField < 0, opts.MaxItems < 0, opts.MaxConcurrency < 0:
		return nil, fmt.Errorf("%w: negative limit", ErrInvalidOptions)
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxField == 0 {
		opts.MaxField = DefaultMaxField
	}
	if opts.MaxItems == 0 {
		opts.MaxItems = DefaultMaxItems
	}
	client := NewSafeClient()
	if opts.Client != nil {
		client = withoutRedirects(opts.Client)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	e := &Engine{
		call:     caller{client: client, timeout: opts.CallTimeout, maxBody: opts.MaxBody},
		maxItems: opts.MaxItems,
		maxConc:  opts.MaxConcurrency,
		synth:    opts.Synthesizer,
		log:      opts.Logger,
		now:      opts.Now,
		sc:       newScanner(opts.MaxField),
	}
	if e.synth == nil {
		e.synth = e.fallback
	}
	return e, nil
}

// timeoutOf is how long a call to a is waited for: its own timeout, else
// the engine's.
func (e *Engine) timeoutOf(a Agent) time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return e.call.timeout
}

// run is the state of one deliberation. Fields below mu are written by the
// phase goroutines.
type run struct {
	e        *Engine
	task     Task
	progress func(Progress)
	progMu   sync.Mutex // serialises progress calls

	mu        sync.Mutex
	res       Result
	unhealthy map[string]bool
}

func (r *run) emit(p Progress) {
	if r.progress == nil {
		return
	}
	p.TaskID = r.task.ID
	p.At = r.e.now()
	r.progMu.Lock()
	defer r.progMu.Unlock()
	r.progress(p)
}

func (r *run) exclude(x Exclusion) {
	r.mu.Lock()
	r.res.Exclusions = append(r.res.Exclusions, x)
	r.mu.Unlock()
	r.emit(Progress{Type: ProgressAgentFailed, Phase: x.Phase, Agent: x.Agent, Message: x.Reason, Exclusion: &x})
}

// Run deliberates on task with the given participants and returns the
// result. The error is non-nil only when the task is invalid
// (ErrInvalidTask) or ctx ends (ctx.Err(), with the partial Result): agent
// failures, including every agent failing, are recorded in the Result.
// progress may be nil.
func (e *Engine) Run(ctx context.Context, task Task, participants []Agent, progress func(Progress)) (Result, error) {
	if strings.TrimSpace(task.Content) == "" {
		return Result{}, fmt.Errorf("%w: content is empty", ErrInvalidTask)
	}
	if task.ID == "" {
		task.ID = newTaskID()
	}
	r := &run{e: e, task: task, progress: progress, unhealthy: map[string]bool{}}
	start := e.now()
	r.res = Result{TaskID: task.ID, Task: task.Content, StartedAt: start}

	agents := r.admit(participants)
	r.phaseAnalyze(ctx, agents)
	analyses := r.res.Analyses
	if len(agents) > 0 && len(analyses) > 0 && ctx.Err() == nil {
		r.phaseChallenge(ctx, agents)
	} else if len(agents) > 0 {
		r.skipAll(PhaseChallenge, agents, skipReason(ctx, "no usable analysis to challenge"))
	}

	var synth Synthesis
	if len(analyses) > 0 {
		synth = r.synthesize(ctx)
	}
	if len(analyses) > 0 && ctx.Err() == nil {
		r.phaseVote(ctx, agents, synth)
	} else if len(agents) > 0 {
		r.skipAll(PhaseVote, agents, skipReason(ctx, "no synthesis to vote on"))
	}

	r.finish(ctx, synth, len(agents))
	r.res.FinishedAt = e.now()
	r.res.Timings.TotalMS = ms(r.res.FinishedAt.Sub(start))
	res := r.res
	r.emit(Progress{Type: ProgressResult, Message: res.Summary, Result: &res})
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

func skipReason(ctx context.Context, why string) string {
	if ctx.Err() != nil {
		return "deliberation cancelled: " + ctx.Err().Error()
	}
	return why
}

// admit drops duplicate and unusable participant records.
func (r *run) admit(participants []Agent) []Agent {
	var out []Agent
	seen := map[string]bool{}
	for _, a := range participants {
		switch base, _, problem := checkBaseURL(a.BaseURL); {
		case a.Name == "":
			r.exclude(Exclusion{Phase: PhaseSelection, Agent: "(unnamed)", Kind: ExcludedInvalidAgent, Reason: "participant has no name"})
		case seen[a.Name]:
			r.exclude(Exclusion{Phase: PhaseSelection, Agent: a.Name, Kind: ExcludedInvalidAgent, Reason: "duplicate participant name"})
		case problem != "":
			r.exclude(Exclusion{Phase: PhaseSelection, Agent: a.Name, Kind: ExcludedInvalidAgent, Reason: "base_url " + problem})
		default:
			seen[a.Name] = true
			a.BaseURL = base
			out = append(out, a)
			r.res.Participants = append(r.res.Participants, a.Name)
		}
	}
	return out
}

func (r *run) skipAll(phase Phase, agents []Agent, why string) {
	kind := ExcludedSkipped
	if strings.HasPrefix(why, "deliberation cancelled") {
		kind = ExcludedCancelled
	}
	for _, a := range agents {
		r.exclude(Exclusion{Phase: phase, Agent: a.Name, Kind: kind, Reason: why})
	}
}

// fanOut calls fn for each agent still healthy, in parallel up to the
// concurrency bound, and waits for all of them.
func (r *run) fanOut(ctx context.Context, phase Phase, agents []Agent, fn func(i int, a Agent)) {
	r.emit(Progress{Type: ProgressPhaseStarted, Phase: phase, Message: fmt.Sprintf("%s: %d agent(s)", phase, len(agents))})
	var sem chan struct{}
	if r.e.maxConc > 0 {
		sem = make(chan struct{}, r.e.maxConc)
	}
	var wg sync.WaitGroup
	for i, a := range agents {
		r.mu.Lock()
		sick := r.unhealthy[a.Name]
		r.mu.Unlock()
		if sick {
			r.exclude(Exclusion{Phase: phase, Agent: a.Name, Kind: ExcludedUnhealthy, Reason: "excluded after an earlier timeout or refused address"})
			continue
		}
		wg.Go(func() {
			if sem != nil {
				select {
				case sem <- struct{}{}:
					defer func() { <-sem }()
				case <-ctx.Done():
					r.exclude(Exclusion{Phase: phase, Agent: a.Name, Kind: ExcludedCancelled, Reason: "deliberation cancelled: " + ctx.Err().Error()})
					return
				}
			}
			fn(i, a)
		})
	}
	wg.Wait()
}

// callAgent performs one call and decodes it; on failure it records the
// exclusion and returns false.
func (r *run) callAgent(ctx context.Context, phase Phase, a Agent, path string, payload []byte, decode func(*decoder, []byte) error) bool {
	call := r.e.call
	call.timeout = r.e.timeoutOf(a)
	cr, fail := call.postRaw(ctx, a.BaseURL, a.APIKey, path, payload)
	data, status := cr.body, cr.status
	log := r.e.log.With("task_id", r.task.ID, "agent", a.Name, "phase", string(phase))
	if fail == nil {
		d := &decoder{sc: r.e.sc, agent: a.Name, phase: phase, maxItems: r.e.maxItems, nulBytes: cr.nulBytes}
		if cr.nulBytes > 0 {
			d.warnf("%s", nulWarning(cr.nulBytes))
		}
		err := decode(d, data)
		r.mu.Lock()
		r.res.Alerts = append(r.res.Alerts, d.alerts...)
		r.mu.Unlock()
		for _, al := range d.alerts {
			log.Warn("prompt injection pattern in agent response", "field", al.Field, "pattern", al.Pattern, "via", al.Via)
		}
		for _, w := range d.warnings {
			r.warn(fmt.Sprintf("%s (%s): %s", a.Name, phase, w))
			log.Warn("agent response problem", "problem", w)
		}
		if err == nil {
			return true
		}
		// Seed 003: 200 with invalid JSON is a warning, not an error.
		log.Warn("agent returned an invalid response; excluded from phase", "error", err)
		fail = &callFailure{kind: ExcludedInvalidResponse, status: status,
			reason: fmt.Sprintf("HTTP %d with %s", status, truncateForMessage(err.Error(), 300))}
	} else if fail.kind == ExcludedCancelled {
		log.Info("agent call cancelled")
	} else if fail.kind == ExcludedBodyTooLarge {
		log.Warn("agent response too large; excluded from phase", "reason", fail.reason)
	} else if fail.kind == ExcludedHTTPError {
		// The reason quotes the agent's answer, which goes into no log line.
		log.Error("agent call failed; excluded", "kind", string(fail.kind), "status", fail.status)
	} else {
		log.Error("agent call failed; excluded", "kind", string(fail.kind), "status", fail.status, "reason", fail.reason)
	}
	if fail.unhealthy {
		r.mu.Lock()
		r.unhealthy[a.Name] = true
		r.mu.Unlock()
	}
	r.exclude(Exclusion{Phase: phase, Agent: a.Name, Kind: fail.kind, Reason: fail.reason, HTTPStatus: fail.status})
	return false
}

func (r *run) warn(w string) {
	r.mu.Lock()
	r.res.Warnings = append(r.res.Warnings, w)
	r.mu.Unlock()
}

func (r *run) phaseAnalyze(ctx context.Context, agents []Agent) {
	if len(agents) == 0 {
		return
	}
	start := r.e.now()
	req, err := json.Marshal(AnalyzeRequest{TaskID: r.task.ID, Content: r.task.Content, Context: r.task.Context, Constraints: r.task.Constraints})
	if err != nil {
		// Only Task.Context can fail to encode (a channel, a func...).
		r.warn("task context cannot be encoded as JSON and was dropped: " + err.Error())
		req, _ = json.Marshal(AnalyzeRequest{TaskID: r.task.ID, Content: r.task.Content, Constraints: r.task.Constraints})
	}
	slots := make([]*Analysis, len(agents))
	r.fanOut(ctx, PhaseAnalyze, agents, func(i int, a Agent) {
		var an Analysis
		ok := r.callAgent(ctx, PhaseAnalyze, a, "/analyze", req, func(d *decoder, b []byte) (err error) {
			an, err = d.analysis(b)
			return err
		})
		if ok {
			slots[i] = &an
			r.emit(Progress{Type: ProgressAgentResponded, Phase: PhaseAnalyze, Agent: a.Name,
				Message: fmt.Sprintf("%d observation(s), %d recommendation(s)", len(an.Observations), len(an.Recommendations))})
		}
	})
	for _, an := range slots { // participant order, whatever the finishing order
		if an != nil {
			r.res.Analyses = append(r.res.Analyses, *an)
		}
	}
	r.res.Timings.AnalyzeMS = ms(r.e.now().Sub(start))
	r.emit(Progress{Type: ProgressPhaseFinished, Phase: PhaseAnalyze, Message: fmt.Sprintf("%d usable analysis(es)", len(r.res.Analyses))})
}

func (r *run) phaseChallenge(ctx context.Context, agents []Agent) {
	start := r.e.now()
	// Each analysis is converted once; each agent's request carries the
	// others'.
	wire := make([]WireAnalysis, len(r.res.Analyses))
	for i, an := range r.res.Analyses {
		wire[i] = toWireAnalysis(an)
	}
	slots := make([]*challengeSet, len(agents))
	var eligible []Agent
	var idx []int
	for i, a := range agents {
		others := 0
		for _, an := range r.res.Analyses {
			if an.AgentName != a.Name {
				others++
			}
		}
		if others == 0 {
			r.exclude(Exclusion{Phase: PhaseChallenge, Agent: a.Name, Kind: ExcludedSkipped, Reason: "no other agent's analysis to challenge"})
			continue
		}
		eligible = append(eligible, a)
		idx = append(idx, i)
	}
	r.fanOut(ctx, PhaseChallenge, eligible, func(j int, a Agent) {
		var others []WireAnalysis
		for k, an := range r.res.Analyses {
			if an.AgentName != a.Name {
				others = append(others, wire[k])
			}
		}
		req, _ := json.Marshal(ChallengeRequest{TaskID: r.task.ID, Content: r.task.Content, OtherAnalyses: others}) // plain strings and numbers: cannot fail
		var cs challengeSet
		ok := r.callAgent(ctx, PhaseChallenge, a, "/challenge", req, func(d *decoder, b []byte) (err error) {
			cs, err = d.challenge(b)
			return err
		})
		if ok {
			slots[idx[j]] = &cs
			r.emit(Progress{Type: ProgressAgentResponded, Phase: PhaseChallenge, Agent: a.Name,
				Message: fmt.Sprintf("%d challenge(s), %d concession(s)", len(cs.challenges), len(cs.concessions))})
		}
	})
	for _, cs := range slots {
		if cs == nil {
			continue
		}
		r.res.Challenges = append(r.res.Challenges, cs.challenges...)
		r.res.Concessions = append(r.res.Concessions, cs.concessions...)
	}
	matchTargets(r.res.Analyses, r.res.Challenges, r.res.Concessions)
	r.res.Timings.ChallengeMS = ms(r.e.now().Sub(start))
	r.emit(Progress{Type: ProgressPhaseFinished, Phase: PhaseChallenge,
		Message: fmt.Sprintf("%d challenge(s), %d concession(s)", len(r.res.Challenges), len(r.res.Concessions))})
}

// synthesize runs the configured synthesizer and falls back to the
// deterministic one when it fails, so that a broken LLM never loses a
// deliberation.
func (r *run) synthesize(ctx context.Context) Synthesis {
	start := r.e.now()
	r.emit(Progress{Type: ProgressPhaseStarted, Phase: PhaseSynthesis, Message: "building synthesis"})
	in := SynthesisInput{Task: r.task, Analyses: r.res.Analyses, Challenges: r.res.Challenges, Concessions: r.res.Concessions}
	s, err := r.e.synth.Synthesize(ctx, in)
	if err == nil && strings.TrimSpace(s.RecommendedDirection) == "" {
		err = fmt.Errorf("empty recommended direction")
	}
	if err != nil {
		r.warn("synthesizer failed, deterministic synthesis used instead: " + truncateForMessage(err.Error(), 300))
		r.e.log.Warn("synthesizer failed; falling back to deterministic", "task_id", r.task.ID, "error", err)
		s, _ = r.e.fallback.Synthesize(ctx, in)
	}
	s = r.sanitizeSynthesis(s)
	r.res.Timings.SynthesisMS = ms(r.e.now().Sub(start))
	r.emit(Progress{Type: ProgressSynthesis, Phase: PhaseSynthesis, Message: s.RecommendedDirection, Synthesis: &s})
	return s
}

// sanitizeSynthesis caps and cleans a synthesis; an LLM synthesizer read
// hostile text and its output is treated like agent output.
func (r *run) sanitizeSynthesis(s Synthesis) Synthesis {
	c := func(t string) string { out, _ := r.e.sc.clean(t); return out }
	s.RecommendedDirection = c(s.RecommendedDirection)
	if s.Synthesizer == "" {
		s.Synthesizer = "custom"
	}
	s.Synthesizer = c(s.Synthesizer)
	for i := range s.KeyFindings {
		k := &s.KeyFindings[i]
		k.Finding, k.Evidence, k.AgentName = c(k.Finding), c(k.Evidence), c(k.AgentName)
		k.SupportedBy, k.ChallengedBy, k.Flags = nonNil(k.SupportedBy), nonNil(k.ChallengedBy), nonNil(k.Flags)
	}
	for i := range s.TradeOffs {
		s.TradeOffs[i] = c(s.TradeOffs[i])
	}
	for i := range s.MinorityViews {
		m := &s.MinorityViews[i]
		m.Finding, m.Evidence, m.AgentName = c(m.Finding), c(m.Evidence), c(m.AgentName)
		m.Flags = nonNil(m.Flags)
		if m.Challenges == nil {
			m.Challenges = []ChallengeNote{}
		}
	}
	s.KeyFindings = nonNilSlice(s.KeyFindings)
	s.TradeOffs = nonNil(s.TradeOffs)
	s.MinorityViews = nonNilSlice(s.MinorityViews)
	return s
}

func (r *run) phaseVote(ctx context.Context, agents []Agent, s Synthesis) {
	start := r.e.now()
	req, _ := json.Marshal(VoteRequest{TaskID: r.task.ID, Content: r.task.Content, Synthesis: toWireSynthesis(s)}) // strings only: cannot fail
	slots := make([]*Vote, len(agents))
	r.fanOut(ctx, PhaseVote, agents, func(i int, a Agent) {
		var v Vote
		ok := r.callAgent(ctx, PhaseVote, a, "/vote", req, func(d *decoder, b []byte) (err error) {
			v, err = d.vote(b)
			return err
		})
		if ok {
			slots[i] = &v
			verdict := "approves"
			if !v.Approve {
				verdict = "dissents"
			}
			r.emit(Progress{Type: ProgressVote, Phase: PhaseVote, Agent: a.Name, Message: a.Name + " " + verdict, Vote: &v})
		}
	})
	for _, v := range slots {
		if v != nil {
			r.res.Votes = append(r.res.Votes, *v)
		}
	}
	r.res.Timings.VoteMS = ms(r.e.now().Sub(start))
	r.emit(Progress{Type: ProgressPhaseFinished, Phase: PhaseVote, Message: fmt.Sprintf("%d vote(s)", len(r.res.Votes))})
}

// finish fills the synthesis fields, the tally, the status and the summary.
func (r *run) finish(ctx context.Context, s Synthesis, participants int) {
	res := &r.res
	// Exclusions arrive in completion order; sort them for stable output.
	phaseRank := map[Phase]int{PhaseSelection: 0, PhaseAnalyze: 1, PhaseChallenge: 2, PhaseSynthesis: 3, PhaseVote: 4}
	slices.SortStableFunc(res.Exclusions, func(a, b Exclusion) int {
		if d := phaseRank[a.Phase] - phaseRank[b.Phase]; d != 0 {
			return d
		}
		return strings.Compare(a.Agent, b.Agent)
	})
	slices.SortStableFunc(res.Alerts, func(a, b Alert) int {
		if d := phaseRank[a.Phase] - phaseRank[b.Phase]; d != 0 {
			return d
		}
		if c := strings.Compare(a.Agent, b.Agent); c != 0 {
			return c
		}
		return strings.Compare(a.Field, b.Field)
	})
	slices.Sort(res.Warnings)
	res.RecommendedDirection = s.RecommendedDirection
	res.KeyFindings = s.KeyFindings
	res.TradeOffs = s.TradeOffs
	res.MinorityViews = s.MinorityViews
	res.Synthesizer = s.Synthesizer
	for _, v := range res.Votes {
		if v.Approve {
			res.Tally.Approve++
		} else {
			res.Tally.Dissent++
		}
	}
	res.Tally.Missing = participants - len(res.Votes)
	switch {
	case res.Tally.Approve+res.Tally.Dissent == 0:
		res.Outcome = OutcomeNoVotes
	case res.Tally.Approve > res.Tally.Dissent:
		res.Outcome = OutcomeApproved
	case res.Tally.Approve < res.Tally.Dissent:
		res.Outcome = OutcomeRejected
	default:
		res.Outcome = OutcomeSplit
	}

	failed := len(uniqueAgents(res.Exclusions, PhaseAnalyze))
	switch {
	case ctx.Err() != nil:
		res.Status = StatusCancelled
		res.Summary = "The deliberation was cancelled before it completed."
		if res.RecommendedDirection == "" {
			res.RecommendedDirection = "No recommendation: the deliberation was cancelled."
		}
	case participants == 0:
		res.Status = StatusNoParticipants
		res.Summary = "No round table was held: there was no usable participant."
		if len(res.Exclusions) > 0 {
			res.Summary = fmt.Sprintf("No round table was held: all %d proposed participant(s) were refused (see exclusions).", len(res.Exclusions))
		}
		res.RecommendedDirection = "No recommendation: no agent could take part."
	case len(res.Analyses) == 0:
		res.Status = StatusNoAnalyses
		res.Summary = fmt.Sprintf("No recommendation: none of the %d participant(s) produced a usable analysis (%s).",
			participants, exclusionDigest(res.Exclusions, PhaseAnalyze))
		res.RecommendedDirection = "No recommendation: no agent produced a usable analysis."
	case len(res.Votes) == 0:
		res.Status = StatusNoVotes
		res.Summary = fmt.Sprintf("%d analysis(es) were synthesised but no agent returned a usable vote.", len(res.Analyses))
	default:
		res.Status = StatusCompleted
		res.Summary = fmt.Sprintf("%d of %d agent(s) analysed; the synthesis was %s (%d approve, %d dissent, %d without a vote).",
			len(res.Analyses), participants, res.Outcome, res.Tally.Approve, res.Tally.Dissent, res.Tally.Missing)
		if failed > 0 {
			res.Summary += fmt.Sprintf(" %d agent(s) failed the analysis.", failed)
		}
	}
	for _, name := range res.Participants {
		if r.unhealthy[name] {
			res.Unhealthy = append(res.Unhealthy, name)
		}
	}
	res.Unhealthy = nonNil(res.Unhealthy)
	res.Participants = nonNil(res.Participants)
	res.KeyFindings = nonNilSlice(res.KeyFindings)
	res.Challenges = nonNilSlice(res.Challenges)
	res.Concessions = nonNilSlice(res.Concessions)
	res.TradeOffs = nonNil(res.TradeOffs)
	res.MinorityViews = nonNilSlice(res.MinorityViews)
	res.Votes = nonNilSlice(res.Votes)
	res.Exclusions = nonNilSlice(res.Exclusions)
	res.Alerts = nonNilSlice(res.Alerts)
	res.Warnings = nonNil(res.Warnings)
	res.Analyses = nonNilSlice(res.Analyses)
}

func uniqueAgents(xs []Exclusion, phase Phase) []string {
	var out []string
	for _, x := range xs {
		if x.Phase == phase && !slices.Contains(out, x.Agent) {
			out = append(out, x.Agent)
		}
	}
	return out
}

// exclusionDigest summarises a phase's exclusions as "a: timeout, b: http_error".
func exclusionDigest(xs []Exclusion, phase Phase) string {
	var parts []string
	for _, x := range xs {
		if x.Phase == phase {
			parts = append(parts, x.Agent+": "+string(x.Kind))
		}
	}
	if len(parts) == 0 {
		return "no answers"
	}
	return strings.Join(parts, ", ")
}

func toWireAnalysis(an Analysis) WireAnalysis {
	w := WireAnalysis{AgentName: an.AgentName, Domain: an.Domain, Observations: []WireObservation{}, Confidence: an.Confidence}
	for _, o := range an.Observations {
		c := o.Confidence
		w.Observations = append(w.Observations, WireObservation{Finding: o.Finding, Evidence: o.Evidence,
			Severity: string(o.Severity), Confidence: &c, Flags: platformFlags(o.Flags)})
	}
	for _, rc := range an.Recommendations {
		w.Recommendations = append(w.Recommendations, WireRecommendation{Action: rc.Action, Rationale: rc.Rationale, Priority: rc.Priority})
	}
	return w
}

func toWireSynthesis(s Synthesis) WireSynthesis {
	w := WireSynthesis{RecommendedDirection: s.RecommendedDirection, KeyFindings: []WireKeyFinding{}, TradeOffs: nonNil(s.TradeOffs), MinorityViews: []string{}}
	for _, k := range s.KeyFindings {
		w.KeyFindings = append(w.KeyFindings, WireKeyFinding{AgentName: k.AgentName, Finding: k.Finding, Evidence: k.Evidence,
			Severity: string(k.Severity), EvidenceLevel: string(k.EvidenceLevel), Flags: platformFlags(k.Flags)})
	}
	for _, m := range s.MinorityViews {
		line := fmt.Sprintf("%s: %s", m.AgentName, m.Finding)
		for _, c := range m.Challenges {
			line += fmt.Sprintf(" (challenged by %s: %s)", c.Agent, truncateForMessage(c.CounterEvidence, 300))
		}
		w.MinorityViews = append(w.MinorityViews, line)
	}
	return w
}

// platformFlags returns the flags worth showing other agents, nil when none.
func platformFlags(f []string) []string {
	if len(f) == 0 {
		return nil
	}
	return f
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func newTaskID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
