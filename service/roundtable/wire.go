package roundtable

import "encoding/json"

// Wire types: the bodies that cross HTTP to and from agents, named exactly
// as docs/protocols/roundtable-agents.md names them. Domain types (Analysis, Vote, ...) are what the
// engine builds from them after decoding and sanitising.

// AnalyzeRequest is the body of POST /analyze.
type AnalyzeRequest struct {
	TaskID      string         `json:"task_id"`
	Content     string         `json:"content"`
	Context     map[string]any `json:"context,omitempty"`
	Constraints []string       `json:"constraints,omitempty"`
}

// WireObservation is one observation as sent to agents in other_analyses.
// Flags is an addition to the seed: it lets a challenger see what the
// platform flagged (injection, speculation, missing evidence level).
type WireObservation struct {
	Finding    string   `json:"finding"`
	Evidence   string   `json:"evidence"`
	Severity   string   `json:"severity"`
	Confidence *float64 `json:"confidence,omitempty"`
	Flags      []string `json:"flags,omitempty"`
}

// WireRecommendation is one recommendation as sent to agents.
type WireRecommendation struct {
	Action    string `json:"action"`
	Rationale string `json:"rationale,omitempty"`
	Priority  string `json:"priority,omitempty"`
}

// WireAnalysis is an analysis as sent to agents in other_analyses. The agent
// name is always the registered name.
type WireAnalysis struct {
	AgentName       string               `json:"agent_name"`
	Domain          string               `json:"domain"`
	Observations    []WireObservation    `json:"observations"`
	Recommendations []WireRecommendation `json:"recommendations,omitempty"`
	Confidence      *float64             `json:"confidence,omitempty"`
}

// ChallengeRequest is the body of POST /challenge.
type ChallengeRequest struct {
	TaskID        string         `json:"task_id"`
	Content       string         `json:"content"`
	OtherAnalyses []WireAnalysis `json:"other_analyses"`
}

// WireKeyFinding is a key finding in the synthesis sent for a vote.
type WireKeyFinding struct {
	AgentName     string   `json:"agent_name"`
	Finding       string   `json:"finding"`
	Evidence      string   `json:"evidence"`
	Severity      string   `json:"severity,omitempty"`
	EvidenceLevel string   `json:"evidence_level,omitempty"`
	Flags         []string `json:"flags,omitempty"`
}

// WireSynthesis is the synthesis sent for a vote. Minority views are sent as
// plain sentences, like trade-offs, since the seed leaves their shape open.
type WireSynthesis struct {
	RecommendedDirection string           `json:"recommended_direction"`
	KeyFindings          []WireKeyFinding `json:"key_findings"`
	TradeOffs            []string         `json:"trade_offs"`
	MinorityViews        []string         `json:"minority_views"`
}

// VoteRequest is the body of POST /vote.
type VoteRequest struct {
	TaskID    string        `json:"task_id"`
	Content   string        `json:"content"`
	Synthesis WireSynthesis `json:"synthesis"`
}

// Response bodies are decoded leniently: list items are kept raw so that one
// malformed observation costs that observation, not the whole analysis.

type wireAnalysisResponse struct {
	AgentName       *string           `json:"agent_name"`
	Domain          *string           `json:"domain"`
	Observations    []json.RawMessage `json:"observations"`
	Recommendations []json.RawMessage `json:"recommendations"`
	Confidence      *float64          `json:"confidence"`
}

type wireObservationResponse struct {
	Finding    *string  `json:"finding"`
	Evidence   *string  `json:"evidence"`
	Severity   *string  `json:"severity"`
	Confidence *float64 `json:"confidence"`
}

type wireRecommendationResponse struct {
	Action    *string `json:"action"`
	Rationale *string `json:"rationale"`
	Priority  *string `json:"priority"`
}

type wireChallengeResponse struct {
	AgentName   *string           `json:"agent_name"`
	Challenges  []json.RawMessage `json:"challenges"`
	Concessions []json.RawMessage `json:"concessions"`
}

type wireChallengeItem struct {
	TargetAgent       *string `json:"target_agent"`
	FindingChallenged *string `json:"finding_challenged"`
	CounterEvidence   *string `json:"counter_evidence"`
}

type wireConcessionItem struct {
	TargetAgent     *string `json:"target_agent"`
	FindingAccepted *string `json:"finding_accepted"`
	Reason          *string `json:"reason"`
}

type wireVoteResponse struct {
	AgentName     *string           `json:"agent_name"`
	Approve       *bool             `json:"approve"`
	Conditions    []json.RawMessage `json:"conditions"`
	DissentReason *string           `json:"dissent_reason"`
}
