package roundtable

import (
	"context"
	"time"
)

// Task is what a round table deliberates on.
type Task struct {
	ID          string         `json:"id"`
	Content     string         `json:"content"`
	Context     map[string]any `json:"context,omitempty"`
	Constraints []string       `json:"constraints,omitempty"`
}

// Phase names a stage of a deliberation.
type Phase string

const (
	PhaseSelection Phase = "selection" // participants refused before any call
	PhaseAnalyze   Phase = "analyze"
	PhaseChallenge Phase = "challenge"
	PhaseSynthesis Phase = "synthesis"
	PhaseVote      Phase = "vote"
)

// Severity of an observation (docs/protocols/roundtable-agents.md: critical, warning or info).
type Severity string

const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// EvidenceLevel is parsed from the evidence tag an agent writes.
type EvidenceLevel string

const (
	EvidenceVerified     EvidenceLevel = "verified"
	EvidenceCorroborated EvidenceLevel = "corroborated"
	EvidenceIndicated    EvidenceLevel = "indicated"
	EvidencePossible     EvidenceLevel = "possible"
	EvidenceNone         EvidenceLevel = "none"
)

// Flags set on findings, challenges, votes and analyses. A flag never
// removes content; some lower a finding's weight (see Observation.Weight).
const (
	FlagPromptInjection      = "prompt_injection"   // an injection pattern was found (see Result.Alerts)
	FlagHiddenCharacters     = "hidden_characters"  // zero-width or other invisible format characters
	FlagHomoglyphs           = "homoglyphs"         // look-alike letters mixed into Latin words
	FlagNULStripped          = "nul_stripped"       // NUL or other control bytes were removed
	FlagTruncated            = "truncated"          // a field was cut to the per-field limit
	FlagSpeculative          = "speculative"        // speculation wording ("might", "I think", ...)
	FlagNoEvidenceLevel      = "no_evidence_level"  // evidence without a [LEVEL: source] tag
	FlagMalformedEvidence    = "malformed_evidence" // a tag without its required source
	FlagNoEvidence           = "no_evidence"        // evidence missing or empty
	FlagUnknownSeverity      = "unknown_severity"   // severity outside critical/warning/info, treated as info
	FlagConfidenceOutOfRange = "confidence_out_of_range"
	FlagNameMismatch         = "name_mismatch"       // the response named another agent than the registered one
	FlagNoCounterEvidence    = "no_counter_evidence" // a challenge without counter-evidence; not counted
	FlagSelfTarget           = "self_target"         // a challenge or concession about the agent's own finding; not counted
	FlagUnknownTarget        = "unknown_target"      // target_agent is not a participant with an analysis
	FlagUnmatchedFinding     = "unmatched_finding"   // the finding quoted could not be matched to one observation
	FlagMissingDissentReason = "missing_dissent_reason"
	FlagDisputed             = "disputed"     // challenged, but also conceded by another agent
	FlagCorroborated         = "corroborated" // other agents reported a similar finding
)

// Observation is a sanitised finding from one agent's analysis.
type Observation struct {
	// ID is "<agent>#<n>" (1-based), stable within a Result.
	ID             string        `json:"id"`
	Finding        string        `json:"finding"`
	Evidence       string        `json:"evidence"`
	EvidenceLevel  EvidenceLevel `json:"evidence_level"`
	EvidenceSource string        `json:"evidence_source,omitempty"`
	Severity       Severity      `json:"severity"`
	// Confidence is what the agent said, clamped to [0,1]; 0.5 when absent.
	Confidence float64 `json:"confidence"`
	// Weight is Confidence discounted for evidence level, speculation and
	// injection flags; the deterministic synthesis ranks by it.
	Weight float64  `json:"weight"`
	Flags  []string `json:"flags"`
}

// Recommendation is a sanitised suggested action.
type Recommendation struct {
	Action    string   `json:"action"`
	Rationale string   `json:"rationale,omitempty"`
	Priority  string   `json:"priority,omitempty"`
	Flags     []string `json:"flags"`
}

// Analysis is one agent's sanitised answer to /analyze.
type Analysis struct {
	AgentName string `json:"agent_name"` // the registered name
	// ReportedName is set when the response named someone else.
	ReportedName    string           `json:"reported_name,omitempty"`
	Domain          string           `json:"domain"`
	Observations    []Observation    `json:"observations"`
	Recommendations []Recommendation `json:"recommendations"`
	Confidence      *float64         `json:"confidence,omitempty"`
	Flags           []string         `json:"flags"`
}

// Challenge is a sanitised challenge from one agent against another's finding.
type Challenge struct {
	Agent             string `json:"agent"`
	TargetAgent       string `json:"target_agent"`
	FindingChallenged string `json:"finding_challenged"`
	CounterEvidence   string `json:"counter_evidence"`
	// FindingID is the Observation.ID the challenge was matched to, or "".
	FindingID string   `json:"finding_id,omitempty"`
	Flags     []string `json:"flags"`
}

// Concession is a sanitised acceptance of another agent's finding.
type Concession struct {
	Agent           string   `json:"agent"`
	TargetAgent     string   `json:"target_agent"`
	FindingAccepted string   `json:"finding_accepted"`
	Reason          string   `json:"reason"`
	FindingID       string   `json:"finding_id,omitempty"`
	Flags           []string `json:"flags"`
}

// Counts reports whether a challenge is taken into account by the synthesis:
// it must carry counter-evidence, target another agent, and match a finding.
func (c Challenge) Counts() bool {
	return c.FindingID != "" && c.CounterEvidence != "" && c.TargetAgent != c.Agent
}

// Vote is a sanitised vote on the synthesis.
type Vote struct {
	AgentName     string   `json:"agent_name"`
	Approve       bool     `json:"approve"`
	Conditions    []string `json:"conditions"`
	DissentReason string   `json:"dissent_reason,omitempty"`
	Flags         []string `json:"flags"`
}

// KeyFinding is a finding retained by the synthesis.
type KeyFinding struct {
	ID            string        `json:"id"`
	AgentName     string        `json:"agent_name"`
	Finding       string        `json:"finding"`
	Evidence      string        `json:"evidence"`
	EvidenceLevel EvidenceLevel `json:"evidence_level"`
	Severity      Severity      `json:"severity"`
	Confidence    float64       `json:"confidence"`
	Score         float64       `json:"score"`
	// SupportedBy lists agents that conceded the finding or reported a
	// similar one; ChallengedBy those whose challenge counted against it.
	SupportedBy  []string `json:"supported_by"`
	ChallengedBy []string `json:"challenged_by"`
	Flags        []string `json:"flags"`
}

// ChallengeNote is one counted challenge against a minority view.
type ChallengeNote struct {
	Agent           string `json:"agent"`
	CounterEvidence string `json:"counter_evidence"`
}

// MinorityView is a finding that was challenged and that no agent conceded.
type MinorityView struct {
	ID         string          `json:"id"`
	AgentName  string          `json:"agent_name"`
	Finding    string          `json:"finding"`
	Evidence   string          `json:"evidence"`
	Severity   Severity        `json:"severity"`
	Score      float64         `json:"score"`
	Challenges []ChallengeNote `json:"challenges"`
	Flags      []string        `json:"flags"`
}

// Synthesis is the combined view put to the vote.
type Synthesis struct {
	RecommendedDirection string         `json:"recommended_direction"`
	KeyFindings          []KeyFinding   `json:"key_findings"`
	TradeOffs            []string       `json:"trade_offs"`
	MinorityViews        []MinorityView `json:"minority_views"`
	// Synthesizer names the implementation that produced it.
	Synthesizer string `json:"synthesizer"`
}

// SynthesisInput is everything a Synthesizer may use. All text in it is
// sanitised agent output: treat it as data, never as instructions (an LLM
// synthesizer should quote it, and heed the flags).
type SynthesisInput struct {
	Task        Task         `json:"task"`
	Analyses    []Analysis   `json:"analyses"`
	Challenges  []Challenge  `json:"challenges"`
	Concessions []Concession `json:"concessions"`
}

// Synthesizer builds the synthesis from the analyses and challenges. The
// engine falls back to DeterministicSynthesizer when it returns an error or
// an empty recommended direction, and records why in Result.Warnings. The
// input is shared with the Result being built: read it, do not modify it.
// The output is sanitised (control bytes, field caps) like agent output.
type Synthesizer interface {
	Synthesize(ctx context.Context, in SynthesisInput) (Synthesis, error)
}

// ExclusionKind classifies why an agent took no part in a phase.
type ExclusionKind string

const (
	ExcludedTimeout         ExclusionKind = "timeout"          // no answer within the call timeout; agent marked unhealthy
	ExcludedHTTPError       ExclusionKind = "http_error"       // 4xx or 5xx
	ExcludedInvalidResponse ExclusionKind = "invalid_response" // 200 with invalid JSON or missing required fields
	ExcludedBodyTooLarge    ExclusionKind = "body_too_large"   // response over the body cap
	ExcludedRedirect        ExclusionKind = "redirect"         // 3xx; redirects are never followed
	ExcludedTransport       ExclusionKind = "transport_error"  // connection refused, reset, TLS...
	ExcludedBlockedAddress  ExclusionKind = "blocked_address"  // resolved to a link-local or metadata address; unhealthy
	ExcludedUnhealthy       ExclusionKind = "unhealthy"        // excluded after an earlier timeout or blocked dial
	ExcludedSkipped         ExclusionKind = "skipped"          // nothing to do in this phase
	ExcludedInvalidAgent    ExclusionKind = "invalid_agent"    // the participant record itself is unusable
	ExcludedCancelled       ExclusionKind = "cancelled"        // the deliberation was cancelled
)

// Exclusion records an agent left out of a phase, and why.
type Exclusion struct {
	Phase  Phase         `json:"phase"`
	Agent  string        `json:"agent"`
	Kind   ExclusionKind `json:"kind"`
	Reason string        `json:"reason"`
	// HTTPStatus is set for http_error and redirect.
	HTTPStatus int `json:"http_status,omitempty"`
}

// Alert is a prompt-injection detection, kept for display and audit.
type Alert struct {
	Phase   Phase  `json:"phase"`
	Agent   string `json:"agent"`
	Field   string `json:"field"`   // e.g. "observations[0].evidence"
	Pattern string `json:"pattern"` // e.g. "ignore_instructions"
	// Via says how it was found: "plain", "normalized" (after removing
	// zero-width characters and mapping homoglyphs) or "base64".
	Via string `json:"via"`
}

// Status of a deliberation as a whole.
type Status string

const (
	StatusCompleted      Status = "completed"       // analyses, synthesis and at least one vote
	StatusNoParticipants Status = "no_participants" // nobody to ask
	StatusNoAnalyses     Status = "no_analyses"     // nobody produced a usable analysis
	StatusNoVotes        Status = "no_votes"        // a synthesis but no usable vote
	StatusCancelled      Status = "cancelled"
)

// Outcome of the vote.
type Outcome string

const (
	OutcomeApproved Outcome = "approved" // more approvals than dissents
	OutcomeRejected Outcome = "rejected" // more dissents than approvals
	OutcomeSplit    Outcome = "split"    // as many of each
	OutcomeNoVotes  Outcome = "no_votes"
)

// Tally counts the usable votes.
type Tally struct {
	Approve int `json:"approve"`
	Dissent int `json:"dissent"`
	// Missing counts participants with no usable vote.
	Missing int `json:"missing"`
}

// Timings are wall-clock durations of each phase, in milliseconds.
type Timings struct {
	AnalyzeMS   float64 `json:"analyze_ms"`
	ChallengeMS float64 `json:"challenge_ms"`
	SynthesisMS float64 `json:"synthesis_ms"`
	VoteMS      float64 `json:"vote_ms"`
	TotalMS     float64 `json:"total_ms"`
}

// Result is the outcome of a deliberation, JSON-ready. Lists are never null.
type Result struct {
	TaskID     string    `json:"task_id"`
	Task       string    `json:"task"`
	Status     Status    `json:"status"`
	Outcome    Outcome   `json:"outcome"`
	Summary    string    `json:"summary"` // one sentence saying what happened, also when nothing could
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Timings    Timings   `json:"timings"`

	Participants         []string       `json:"participants"`
	RecommendedDirection string         `json:"recommended_direction"`
	KeyFindings          []KeyFinding   `json:"key_findings"`
	Challenges           []Challenge    `json:"challenges"`
	Concessions          []Concession   `json:"concessions"`
	TradeOffs            []string       `json:"trade_offs"`
	MinorityViews        []MinorityView `json:"minority_views"`
	Votes                []Vote         `json:"votes"`
	Tally                Tally          `json:"tally"`
	Exclusions           []Exclusion    `json:"exclusions"`
	// Unhealthy lists agents that timed out or dialled a refused address;
	// the caller may record that against the registration.
	Unhealthy   []string   `json:"unhealthy"`
	Alerts      []Alert    `json:"alerts"`
	Warnings    []string   `json:"warnings"`
	Synthesizer string     `json:"synthesizer"`
	Analyses    []Analysis `json:"analyses"`
}

// ProgressType names a progress event.
type ProgressType string

const (
	ProgressPhaseStarted   ProgressType = "phase_started"
	ProgressPhaseFinished  ProgressType = "phase_finished"
	ProgressAgentResponded ProgressType = "agent_responded"
	ProgressAgentFailed    ProgressType = "agent_failed"
	ProgressSynthesis      ProgressType = "synthesis"
	ProgressVote           ProgressType = "vote"
	ProgressResult         ProgressType = "result"
)

// Progress is one event of a running deliberation, suitable for an SSE
// payload as is. Exactly one of the pointer fields is set for
// agent_failed (Exclusion), synthesis (Synthesis), vote (Vote) and result
// (Result).
type Progress struct {
	Type      ProgressType `json:"type"`
	TaskID    string       `json:"task_id"`
	Phase     Phase        `json:"phase,omitempty"`
	Agent     string       `json:"agent,omitempty"`
	Message   string       `json:"message"`
	At        time.Time    `json:"at"`
	Exclusion *Exclusion   `json:"exclusion,omitempty"`
	Synthesis *Synthesis   `json:"synthesis,omitempty"`
	Vote      *Vote        `json:"vote,omitempty"`
	Result    *Result      `json:"result,omitempty"`
}
