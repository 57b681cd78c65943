package roundtable

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// DeterministicSynthesizer builds a synthesis without a model:
//
//   - every observation is scored severity × confidence × evidence level,
//     with speculation and injection flags halving the weight;
//   - observations of different agents that say the same thing are merged
//     (the best-scored one is kept, the others' agents become supporters);
//   - a finding challenged with counter-evidence and neither conceded nor
//     corroborated by anyone becomes a minority view;
//   - a finding both challenged and supported stays, flagged disputed, and
//     the dispute is listed as a trade-off, as are severity disagreements;
//   - the recommended direction lists the best-supported recommendations of
//     the highest priority, never one flagged as a prompt injection; with no
//     usable recommendation it points at the top findings.
//
// Same input, same output. It is safe for concurrent use.
type DeterministicSynthesizer struct {
	// MaxKeyFindings caps the key findings (default 20); the rest remain in
	// Result.Analyses.
	MaxKeyFindings int
}

// Name used in Synthesis.Synthesizer.
const deterministicName = "deterministic"

type scoredFinding struct {
	agent      string
	key        textKey
	obs        Observation
	score      float64
	group      int
	supporters []string // agents of corroborating findings or concessions
	challenges []Challenge
	corrob     []Observation
}

// Synthesize implements Synthesizer. It never returns an error.
func (d DeterministicSynthesizer) Synthesize(_ context.Context, in SynthesisInput) (Synthesis, error) {
	maxKey := d.MaxKeyFindings
	if maxKey <= 0 {
		maxKey = 20
	}
	var all []*scoredFinding
	byID := map[string]*scoredFinding{}
	for _, an := range in.Analyses {
		for _, o := range an.Observations {
			f := &scoredFinding{agent: an.AgentName, obs: o, key: keyOf(o.Finding), score: severityWeight(o.Severity) * o.Weight}
			f.group = len(all)
			all = append(all, f)
			byID[o.ID] = f
		}
	}

	// Corroboration: union similar findings of different agents.
	parent := make([]int, len(all))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[i].agent != all[j].agent && keySimilarity(all[i].key, all[j].key) >= 0.6 {
				parent[find(j)] = find(i)
			}
		}
	}
	groups := map[int][]*scoredFinding{}
	var order []int
	for i, f := range all {
		g := find(i)
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], f)
	}

	for _, c := range in.Challenges {
		if f, ok := byID[c.FindingID]; ok && c.Counts() {
			f.challenges = append(f.challenges, c)
		}
	}
	for _, c := range in.Concessions {
		if f, ok := byID[c.FindingID]; ok && c.Agent != f.agent && !slices.Contains(f.supporters, c.Agent) {
			f.supporters = append(f.supporters, c.Agent)
		}
	}

	var syn Synthesis
	syn.Synthesizer = deterministicName
	var kept []*scoredFinding
	for _, g := range order {
		members := groups[g]
		primary := members[0]
		for _, m := range members[1:] {
			if m.score > primary.score {
				primary = m
			}
		}
		sev := map[Severity][]string{}
		for _, m := range members {
			sev[m.obs.Severity] = append(sev[m.obs.Severity], m.agent)
			if m == primary {
				continue
			}
			primary.corrob = append(primary.corrob, m.obs)
			primary.challenges = append(primary.challenges, m.challenges...)
			for _, s := range append([]string{m.agent}, m.supporters...) {
				if s != primary.agent && !slices.Contains(primary.supporters, s) {
					primary.supporters = append(primary.supporters, s)
				}
			}
		}
		if len(sev) > 1 {
			var parts []string
			for _, s := range []Severity{SeverityCritical, SeverityWarning, SeverityInfo} {
				if len(sev[s]) > 0 {
					parts = append(parts, fmt.Sprintf("%s (%s)", s, strings.Join(sev[s], ", ")))
				}
			}
			syn.TradeOffs = append(syn.TradeOffs, fmt.Sprintf("Agents disagree on the severity of “%s”: %s.",
				truncateForMessage(primary.obs.Finding, 160), strings.Join(parts, " vs ")))
		}
		var challengers []string
		for _, c := range primary.challenges {
			if !slices.Contains(challengers, c.Agent) {
				challengers = append(challengers, c.Agent)
			}
		}
		// Support raises a score, counted challenges lower it.
		primary.score = round3(primary.score * (1 + 0.2*float64(len(primary.supporters))) / (1 + 0.2*float64(len(challengers))))

		if len(challengers) > 0 && len(primary.supporters) == 0 {
			mv := MinorityView{ID: primary.obs.ID, AgentName: primary.agent, Finding: primary.obs.Finding, Evidence: primary.obs.Evidence,
				Severity: primary.obs.Severity, Score: primary.score, Flags: slices.Clone(primary.obs.Flags), Challenges: []ChallengeNote{}}
			for _, c := range primary.challenges {
				mv.Challenges = append(mv.Challenges, ChallengeNote{Agent: c.Agent, CounterEvidence: c.CounterEvidence})
			}
			syn.MinorityViews = append(syn.MinorityViews, mv)
			continue
		}
		if len(challengers) > 0 {
			primary.obs.Flags = addFlag(slices.Clone(primary.obs.Flags), FlagDisputed)
			for _, c := range primary.challenges {
				syn.TradeOffs = append(syn.TradeOffs, fmt.Sprintf("“%s” (%s) is disputed: %s counters “%s”; supported by %s.",
					truncateForMessage(primary.obs.Finding, 160), primary.agent, c.Agent,
					truncateForMessage(c.CounterEvidence, 240), strings.Join(primary.supporters, ", ")))
			}
		}
		if len(primary.corrob) > 0 {
			primary.obs.Flags = addFlag(slices.Clone(primary.obs.Flags), FlagCorroborated)
		}
		kept = append(kept, primary)
	}

	slices.SortStableFunc(kept, func(a, b *scoredFinding) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return severityRank(b.obs.Severity) - severityRank(a.obs.Severity)
	})
	slices.SortStableFunc(syn.MinorityViews, func(a, b MinorityView) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(kept) > maxKey {
		kept = kept[:maxKey]
	}
	critical := 0
	for _, f := range kept {
		kf := KeyFinding{ID: f.obs.ID, AgentName: f.agent, Finding: f.obs.Finding, Evidence: f.obs.Evidence,
			EvidenceLevel: f.obs.EvidenceLevel, Severity: f.obs.Severity, Confidence: f.obs.Confidence, Score: f.score,
			SupportedBy: nonNil(f.supporters), ChallengedBy: []string{}, Flags: nonNil(f.obs.Flags)}
		for _, c := range f.challenges {
			if !slices.Contains(kf.ChallengedBy, c.Agent) {
				kf.ChallengedBy = append(kf.ChallengedBy, c.Agent)
			}
		}
		if f.obs.Severity == SeverityCritical {
			critical++
		}
		syn.KeyFindings = append(syn.KeyFindings, kf)
	}
	syn.RecommendedDirection = direction(in, syn.KeyFindings, critical)
	syn.KeyFindings = nonNilSlice(syn.KeyFindings)
	syn.TradeOffs = nonNil(syn.TradeOffs)
	syn.MinorityViews = nonNilSlice(syn.MinorityViews)
	return syn, nil
}

type rankedRec struct {
	rec    Recommendation
	key    textKey
	agents []string
	score  float64
}

// direction writes the recommended direction from the recommendations, or
// from the key findings when no usable recommendation exists.
func direction(in SynthesisInput, key []KeyFinding, critical int) string {
	var recs []*rankedRec
	for _, an := range in.Analyses {
		for _, rc := range an.Recommendations {
			if slices.Contains(rc.Flags, FlagPromptInjection) {
				continue // never put a flagged instruction in front of the voters
			}
			merged := false
			key := keyOf(rc.Action)
			for _, r := range recs {
				if keySimilarity(r.key, key) >= 0.6 {
					if !slices.Contains(r.agents, an.AgentName) {
						r.agents = append(r.agents, an.AgentName)
					}
					if priorityWeight(rc.Priority) > priorityWeight(r.rec.Priority) {
						r.rec.Priority = rc.Priority
					}
					merged = true
					break
				}
			}
			if !merged {
				recs = append(recs, &rankedRec{rec: rc, key: key, agents: []string{an.AgentName}})
			}
		}
	}
	for _, r := range recs {
		r.score = priorityWeight(r.rec.Priority) * (1 + 0.5*float64(len(r.agents)-1))
	}
	slices.SortStableFunc(recs, func(a, b *rankedRec) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var b strings.Builder
	if critical > 0 {
		fmt.Fprintf(&b, "Address %d critical finding(s) first. ", critical)
	}
	switch {
	case len(recs) > 0:
		b.WriteString("Recommended: ")
		for i, r := range recs[:min(3, len(recs))] {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s)", truncateForMessage(strings.TrimRight(r.rec.Action, ". "), 240), strings.Join(r.agents, ", "))
		}
		b.WriteString(".")
	case len(key) > 0:
		b.WriteString("Address the top findings: ")
		for i, k := range key[:min(3, len(key))] {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s, %s)", truncateForMessage(strings.TrimRight(k.Finding, ". "), 200), k.AgentName, k.Severity)
		}
		b.WriteString(".")
	default:
		fmt.Fprintf(&b, "No action recommended: the %d analysis(es) reported no finding that stood unchallenged.", len(in.Analyses))
	}
	return b.String()
}

func priorityWeight(p string) float64 {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "critical", "urgent", "high", "p0", "p1":
		return 3
	case "warning", "medium", "moderate", "p2":
		return 2
	default:
		return 1
	}
}

func severityRank(s Severity) int {
	switch s {
	case SeverityCritical:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

// matchTargets resolves each challenge and concession to the observation it
// is about, flagging those that cannot count.
func matchTargets(analyses []Analysis, challenges []Challenge, concessions []Concession) {
	byAgent := map[string]*Analysis{}
	keys := map[string]textKey{} // observation ID → key
	for i := range analyses {
		byAgent[analyses[i].AgentName] = &analyses[i]
		for _, o := range analyses[i].Observations {
			keys[o.ID] = keyOf(o.Finding)
		}
	}
	resolve := func(agent, target, quoted string) (string, string, string) {
		an, ok := byAgent[target]
		if !ok {
			for name, a := range byAgent { // tolerate case differences
				if strings.EqualFold(name, target) {
					an, ok, target = a, true, name
					break
				}
			}
		}
		switch {
		case target == agent:
			return target, "", FlagSelfTarget
		case !ok:
			return target, "", FlagUnknownTarget
		}
		best, bestScore := "", 0.0
		qk := keyOf(quoted)
		for _, o := range an.Observations {
			if s := keySimilarity(qk, keys[o.ID]); s > bestScore {
				best, bestScore = o.ID, s
			}
		}
		if bestScore < 0.5 {
			return target, "", FlagUnmatchedFinding
		}
		return target, best, ""
	}
	for i := range challenges {
		c := &challenges[i]
		var flag string
		c.TargetAgent, c.FindingID, flag = resolve(c.Agent, c.TargetAgent, c.FindingChallenged)
		if flag != "" {
			c.Flags = addFlag(c.Flags, flag)
		}
	}
	for i := range concessions {
		c := &concessions[i]
		var flag string
		c.TargetAgent, c.FindingID, flag = resolve(c.Agent, c.TargetAgent, c.FindingAccepted)
		if flag != "" {
			c.Flags = addFlag(c.Flags, flag)
		}
	}
}

// textKey is a text prepared for similarity: computed once per finding so
// that all-pairs comparisons stay cheap.
type textKey struct {
	folded string
	stems  []string // sorted, unique
}

func keyOf(s string) textKey {
	ws := words(s)
	k := textKey{folded: strings.Join(ws, " ")}
	for _, w := range ws {
		if len(w) < 3 || stopWord(w) {
			continue
		}
		if r := []rune(w); len(r) > 6 {
			w = string(r[:6])
		}
		k.stems = append(k.stems, w)
	}
	slices.Sort(k.stems)
	k.stems = slices.Compact(k.stems)
	return k
}

// keySimilarity compares two short texts by their keys: 1 when equal after
// folding, 0.9 when one contains the other, else the overlap coefficient of
// their content-word stems (shared stems over the smaller set), counted only
// from two shared stems up.
func keySimilarity(a, b textKey) float64 {
	fa, fb := a.folded, b.folded
	if fa == "" || fb == "" {
		return 0
	}
	if fa == fb {
		return 1
	}
	if len(fa) >= 8 && len(fb) >= 8 && (strings.Contains(fa, fb) || strings.Contains(fb, fa)) {
		return 0.9
	}
	shared := 0
	for i, j := 0, 0; i < len(a.stems) && j < len(b.stems); {
		switch c := strings.Compare(a.stems[i], b.stems[j]); {
		case c == 0:
			shared++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	if shared < 2 {
		return 0 // one shared word says little
	}
	return float64(shared) / float64(min(len(a.stems), len(b.stems)))
}
