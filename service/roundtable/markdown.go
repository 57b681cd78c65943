package roundtable

import (
	"fmt"
	"strings"
)

// RenderMarkdown renders a Result as the Markdown reply of a "roundtable"
// agent. Agent-supplied text is escaped and kept on one line, so that an
// agent cannot inject headings, links, images (which a renderer would fetch)
// or HTML into the reply.
func RenderMarkdown(res Result) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("## Round table: %s\n\n", inline(res.Task, 300))
	p("**Status:** %s · **Outcome:** %s · **Votes:** %d approve, %d dissent, %d missing\n\n",
		res.Status, res.Outcome, res.Tally.Approve, res.Tally.Dissent, res.Tally.Missing)
	if res.Summary != "" {
		p("%s\n\n", inline(res.Summary, 0))
	}

	p("### Recommended direction\n\n%s\n\n", inline(res.RecommendedDirection, 0))

	if len(res.KeyFindings) > 0 {
		p("### Key findings\n\n")
		for i, k := range res.KeyFindings {
			p("%d. **%s** %s — _%s_, evidence %s, confidence %.2f\n", i+1, strings.ToUpper(string(k.Severity)),
				inline(k.Finding, 0), inline(k.AgentName, 80), k.EvidenceLevel, k.Confidence)
			if k.Evidence != "" {
				p("   - Evidence: %s\n", inline(k.Evidence, 500))
			}
			if len(k.SupportedBy) > 0 {
				p("   - Supported by: %s\n", inlineList(k.SupportedBy))
			}
			if len(k.ChallengedBy) > 0 {
				p("   - Challenged by: %s\n", inlineList(k.ChallengedBy))
			}
			if len(k.Flags) > 0 {
				p("   - Flags: %s\n", flagList(k.Flags))
			}
		}
		p("\n")
	}

	if len(res.Challenges) > 0 || len(res.Concessions) > 0 {
		p("### Challenges and concessions\n\n")
		for _, c := range res.Challenges {
			p("- %s challenges %s on “%s”: %s", inline(c.Agent, 80), inline(c.TargetAgent, 80),
				inline(c.FindingChallenged, 200), inline(c.CounterEvidence, 500))
			if len(c.Flags) > 0 {
				p(" (%s)", flagList(c.Flags))
			}
			p("\n")
		}
		for _, c := range res.Concessions {
			p("- %s concedes to %s on “%s”: %s", inline(c.Agent, 80), inline(c.TargetAgent, 80),
				inline(c.FindingAccepted, 200), inline(c.Reason, 500))
			if len(c.Flags) > 0 {
				p(" (%s)", flagList(c.Flags))
			}
			p("\n")
		}
		p("\n")
	}

	if len(res.TradeOffs) > 0 {
		p("### Trade-offs\n\n")
		for _, t := range res.TradeOffs {
			p("- %s\n", inline(t, 0))
		}
		p("\n")
	}

	if len(res.MinorityViews) > 0 {
		p("### Minority views\n\n")
		for _, m := range res.MinorityViews {
			p("- **%s** (%s): %s\n", inline(m.AgentName, 80), m.Severity, inline(m.Finding, 0))
			for _, c := range m.Challenges {
				p("  - challenged by %s: %s\n", inline(c.Agent, 80), inline(c.CounterEvidence, 500))
			}
		}
		p("\n")
	}

	if len(res.Votes) > 0 {
		p("### Votes\n\n")
		for _, v := range res.Votes {
			verdict := "approves"
			if !v.Approve {
				verdict = "**dissents**"
			}
			p("- %s %s", inline(v.AgentName, 80), verdict)
			if !v.Approve {
				reason := v.DissentReason
				if reason == "" {
					reason = "(no reason given)"
				}
				p(": %s", inline(reason, 500))
			}
			p("\n")
			for _, c := range v.Conditions {
				p("  - condition: %s\n", inline(c, 300))
			}
			if len(v.Flags) > 0 {
				p("  - flags: %s\n", flagList(v.Flags))
			}
		}
		p("\n")
	}

	if len(res.Exclusions) > 0 {
		p("### Excluded agents\n\n| Phase | Agent | Kind | Reason |\n|---|---|---|---|\n")
		for _, x := range res.Exclusions {
			p("| %s | %s | %s | %s |\n", x.Phase, cell(x.Agent), x.Kind, cell(x.Reason))
		}
		p("\n")
	}

	if len(res.Alerts) > 0 {
		p("### Prompt-injection alerts\n\nFlagged, not removed:\n\n")
		for _, a := range res.Alerts {
			p("- %s, %s `%s`: %s (%s)\n", inline(a.Agent, 80), a.Phase, codeSafe(a.Field), a.Pattern, a.Via)
		}
		p("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// inline makes agent text safe inside one Markdown line: whitespace runs
// (newlines included) become one space and Markdown/HTML metacharacters are
// backslash-escaped. n > 0 caps the length in runes.
func inline(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if n > 0 {
		s = truncateForMessage(s, n)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '#', '|', '~':
			b.WriteByte('\\')
		case '&':
			b.WriteString("&amp;")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func cell(s string) string { return inline(s, 300) }

func inlineList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = inline(x, 80)
	}
	return strings.Join(out, ", ")
}

func flagList(flags []string) string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "`" + codeSafe(f) + "`"
	}
	return strings.Join(out, ", ")
}

func codeSafe(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s)
}
