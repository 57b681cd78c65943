package roundtable

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// errInvalidResponse is wrapped by decode errors: the agent answered 200 but
// with a body that is not the JSON object the protocol requires.
var errInvalidResponse = errors.New("invalid response")

// decoder turns one agent's response body into sanitised domain values,
// collecting injection alerts and warnings as it goes.
type decoder struct {
	sc       *scanner
	agent    string // registered name
	phase    Phase
	maxItems int
	nulBytes int // NUL bytes removed from the body before decoding (flagged)

	alerts   []Alert
	warnings []string
}

func (d *decoder) warnf(format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf(format, args...))
}

// text sanitises one field and records alerts under its path.
func (d *decoder) text(field string, p *string) (string, []string) {
	if p == nil {
		return "", nil
	}
	out, rep := d.sc.scan(*p)
	for _, h := range rep.patterns {
		d.alerts = append(d.alerts, Alert{Phase: d.phase, Agent: d.agent, Field: field, Pattern: h.Pattern, Via: h.Via})
	}
	return strings.TrimSpace(out), rep.flags
}

// unmarshalObject decodes a response body that must be a JSON object.
func unmarshalObject(body []byte, v any) error {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return fmt.Errorf("%w: empty body", errInvalidResponse)
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("%w: body is not a JSON object", errInvalidResponse)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", errInvalidResponse, err)
	}
	return nil
}

// checkName flags a response naming another agent. Identity is always the
// registered name: a hostile agent must not be able to speak as another.
func (d *decoder) checkName(p *string) (reported string, flags []string) {
	if p == nil {
		d.warnf("agent_name missing")
		return "", nil
	}
	name, _ := d.text("agent_name", p)
	if name != d.agent {
		d.warnf("agent_name %q differs from registered name %q", truncateForMessage(name, 80), d.agent)
		return name, []string{FlagNameMismatch}
	}
	return "", nil
}

func (d *decoder) capItems(field string, n int) int {
	if n > d.maxItems {
		d.warnf("%s: %d items, only the first %d kept", field, n, d.maxItems)
		return d.maxItems
	}
	return n
}

// bodyFlags are the flags of what was repaired in a whole response body.
func (d *decoder) bodyFlags(flags []string, body []byte) []string {
	if !utf8.Valid(body) { // JSON decoding already turned the bad bytes into U+FFFD
		flags = addFlag(flags, "invalid_utf8_repaired")
	}
	if d.nulBytes > 0 {
		flags = addFlag(flags, FlagNULStripped)
	}
	return flags
}

// analysis decodes an /analyze response. The protocol's validator decides
// (validate.go): a response it finds an error in as a whole is refused,
// and a list item it finds an error in is dropped, so agent-check and the
// engine always agree.
func (d *decoder) analysis(body []byte) (Analysis, error) {
	v := verdictOf(validateAnalysis(d.sc, body, false))
	if len(v.refused) > 0 {
		return Analysis{}, fmt.Errorf("%w: %s", errInvalidResponse, describeIssues(v.refused))
	}
	var w wireAnalysisResponse
	if err := unmarshalObject(body, &w); err != nil {
		return Analysis{}, err
	}
	a := Analysis{AgentName: d.agent, Observations: []Observation{}, Recommendations: []Recommendation{}, Flags: []string{}}
	a.ReportedName, a.Flags = d.checkName(w.AgentName)
	a.Flags = d.bodyFlags(a.Flags, body)
	var f []string
	a.Domain, f = d.text("domain", w.Domain)
	a.Flags = mergeFlags(a.Flags, f)
	if w.Confidence != nil {
		c, out := clamp01(*w.Confidence)
		a.Confidence = &c
		if out {
			a.Flags = addFlag(a.Flags, FlagConfidenceOutOfRange)
		}
	}
	n := d.capItems("observations", len(w.Observations))
	for i, raw := range w.Observations[:n] {
		path := fmt.Sprintf("observations[%d]", i)
		if errs := v.dropped[path]; len(errs) > 0 {
			d.warnf("%s dropped: %s", path, describeIssues(errs))
			continue
		}
		var wo wireObservationResponse
		if err := json.Unmarshal(raw, &wo); err != nil || len(raw) == 0 || raw[0] != '{' {
			d.warnf("%s: not an observation object, dropped", path)
			continue
		}
		o, ok := d.observation(path, wo)
		if !ok {
			continue
		}
		o.ID = fmt.Sprintf("%s#%d", d.agent, len(a.Observations)+1)
		a.Observations = append(a.Observations, o)
	}
	n = d.capItems("recommendations", len(w.Recommendations))
	for i, raw := range w.Recommendations[:n] {
		path := fmt.Sprintf("recommendations[%d]", i)
		if errs := v.dropped[path]; len(errs) > 0 {
			d.warnf("%s dropped: %s", path, describeIssues(errs))
			continue
		}
		var wr wireRecommendationResponse
		if err := json.Unmarshal(raw, &wr); err != nil || len(raw) == 0 || raw[0] != '{' {
			d.warnf("%s: not a recommendation object, dropped", path)
			continue
		}
		r := Recommendation{Flags: []string{}}
		var f1, f2, f3 []string
		r.Action, f1 = d.text(path+".action", wr.Action)
		r.Rationale, f2 = d.text(path+".rationale", wr.Rationale)
		r.Priority, f3 = d.text(path+".priority", wr.Priority)
		r.Priority = strings.ToLower(r.Priority)
		if r.Action == "" {
			d.warnf("%s: no action, dropped", path)
			continue
		}
		r.Flags = mergeFlags(r.Flags, f1, f2, f3)
		a.Recommendations = append(a.Recommendations, r)
	}
	return a, nil
}

func (d *decoder) observation(path string, wo wireObservationResponse) (Observation, bool) {
	o := Observation{Flags: []string{}}
	var f1, f2, f3 []string
	o.Finding, f1 = d.text(path+".finding", wo.Finding)
	o.Evidence, f2 = d.text(path+".evidence", wo.Evidence)
	var sev string
	sev, f3 = d.text(path+".severity", wo.Severity)
	o.Flags = mergeFlags(o.Flags, f1, f2, f3)
	if o.Finding == "" {
		d.warnf("%s: no finding, dropped", path)
		return o, false
	}
	switch s := Severity(strings.ToLower(sev)); s {
	case SeverityCritical, SeverityWarning, SeverityInfo:
		o.Severity = s
	default:
		o.Severity = SeverityInfo
		o.Flags = addFlag(o.Flags, FlagUnknownSeverity)
	}
	o.Confidence = 0.5
	if wo.Confidence != nil {
		c, out := clamp01(*wo.Confidence)
		o.Confidence = c
		if out {
			o.Flags = addFlag(o.Flags, FlagConfidenceOutOfRange)
		}
	}
	ev := d.sc.parseEvidence(o.Evidence)
	o.EvidenceLevel, o.EvidenceSource = ev.level, ev.source
	o.Flags = mergeFlags(o.Flags, ev.flags)
	o.Weight = o.Confidence * evidenceWeight(o.EvidenceLevel)
	if d.sc.speculative(o.Finding, o.Evidence) {
		o.Flags = addFlag(o.Flags, FlagSpeculative)
		o.Weight *= speculationPenalty
	}
	if slices.Contains(o.Flags, FlagPromptInjection) {
		o.Weight *= injectionPenalty
	}
	o.Weight = round3(o.Weight)
	return o, true
}

// challengeSet is what one agent's /challenge answer yields.
type challengeSet struct {
	challenges  []Challenge
	concessions []Concession
	flags       []string
}

func (d *decoder) challenge(body []byte) (challengeSet, error) {
	var w wireChallengeResponse
	if err := unmarshalObject(body, &w); err != nil {
		return challengeSet{}, err
	}
	var cs challengeSet
	_, cs.flags = d.checkName(w.AgentName)
	cs.flags = d.bodyFlags(cs.flags, body)
	n := d.capItems("challenges", len(w.Challenges))
	for i, raw := range w.Challenges[:n] {
		path := fmt.Sprintf("challenges[%d]", i)
		var wc wireChallengeItem
		if err := json.Unmarshal(raw, &wc); err != nil || len(raw) == 0 || raw[0] != '{' {
			d.warnf("%s: not a challenge object, dropped", path)
			continue
		}
		c := Challenge{Agent: d.agent, Flags: []string{}}
		var f1, f2, f3 []string
		c.TargetAgent, f1 = d.text(path+".target_agent", wc.TargetAgent)
		c.FindingChallenged, f2 = d.text(path+".finding_challenged", wc.FindingChallenged)
		c.CounterEvidence, f3 = d.text(path+".counter_evidence", wc.CounterEvidence)
		c.Flags = mergeFlags(c.Flags, f1, f2, f3)
		if c.TargetAgent == "" || c.FindingChallenged == "" {
			d.warnf("%s: target_agent or finding_challenged missing, dropped", path)
			continue
		}
		if c.CounterEvidence == "" {
			c.Flags = addFlag(c.Flags, FlagNoCounterEvidence)
		}
		if d.sc.speculative(c.CounterEvidence) {
			c.Flags = addFlag(c.Flags, FlagSpeculative)
		}
		cs.challenges = append(cs.challenges, c)
	}
	n = d.capItems("concessions", len(w.Concessions))
	for i, raw := range w.Concessions[:n] {
		path := fmt.Sprintf("concessions[%d]", i)
		var wc wireConcessionItem
		if err := json.Unmarshal(raw, &wc); err != nil || len(raw) == 0 || raw[0] != '{' {
			d.warnf("%s: not a concession object, dropped", path)
			continue
		}
		c := Concession{Agent: d.agent, Flags: []string{}}
		var f1, f2, f3 []string
		c.TargetAgent, f1 = d.text(path+".target_agent", wc.TargetAgent)
		c.FindingAccepted, f2 = d.text(path+".finding_accepted", wc.FindingAccepted)
		c.Reason, f3 = d.text(path+".reason", wc.Reason)
		c.Flags = mergeFlags(c.Flags, f1, f2, f3)
		if c.TargetAgent == "" || c.FindingAccepted == "" {
			d.warnf("%s: target_agent or finding_accepted missing, dropped", path)
			continue
		}
		cs.concessions = append(cs.concessions, c)
	}
	return cs, nil
}

func (d *decoder) vote(body []byte) (Vote, error) {
	var w wireVoteResponse
	if err := unmarshalObject(body, &w); err != nil {
		return Vote{}, err
	}
	if w.Approve == nil {
		return Vote{}, fmt.Errorf("%w: approve missing or null", errInvalidResponse)
	}
	v := Vote{AgentName: d.agent, Approve: *w.Approve, Conditions: []string{}, Flags: []string{}}
	_, v.Flags = d.checkName(w.AgentName)
	v.Flags = d.bodyFlags(v.Flags, body)
	if v.Flags == nil {
		v.Flags = []string{}
	}
	n := d.capItems("conditions", len(w.Conditions))
	for i, raw := range w.Conditions[:n] {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			d.warnf("conditions[%d]: not a string, dropped", i)
			continue
		}
		c, f := d.text(fmt.Sprintf("conditions[%d]", i), &s)
		v.Flags = mergeFlags(v.Flags, f)
		if c != "" {
			v.Conditions = append(v.Conditions, c)
		}
	}
	var f []string
	v.DissentReason, f = d.text("dissent_reason", w.DissentReason)
	v.Flags = mergeFlags(v.Flags, f)
	if !v.Approve && v.DissentReason == "" {
		v.Flags = addFlag(v.Flags, FlagMissingDissentReason)
		d.warnf("dissent without dissent_reason")
	}
	return v, nil
}

func clamp01(f float64) (float64, bool) {
	switch {
	case f < 0:
		return 0, true
	case f > 1:
		return 1, true
	}
	return f, false
}

func round3(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}

func addFlag(flags []string, f string) []string {
	if slices.Contains(flags, f) {
		return flags
	}
	return append(flags, f)
}

func mergeFlags(flags []string, more ...[]string) []string {
	if flags == nil {
		flags = []string{}
	}
	for _, m := range more {
		for _, f := range m {
			flags = addFlag(flags, f)
		}
	}
	return flags
}

// truncateForMessage shortens agent text quoted in reasons and warnings.
func truncateForMessage(s string, n int) string {
	if cut, ok := truncateRunes(s, n); ok {
		return cut + "…"
	}
	return s
}
