package roundtable

import (
	"fmt"
	"strings"
)

// The /analyze validator. One function, validateAnalysis, decides field by
// field what in an /analyze response breaks the protocol. The engine refuses
// a response with an error outside its lists (the response as a whole:
// required agent_name, domain and observations, their types) and drops each
// list item with an error (an observation without its finding, evidence or
// severity...); agent-check reports the same issues. So the checker and the
// engine cannot disagree: a response agent-check passes is used whole, and
// one it fails is refused or loses exactly the items it names.

// validateAnalysis returns the issues of an /analyze response body. detail
// adds the warnings (injection scan, evidence tags, unknown fields) that
// only the checker reports; the errors are the same either way.
func validateAnalysis(sc *scanner, body []byte, detail bool) []Issue {
	c := &conformance{sc: sc, endpoint: "/analyze", brief: !detail}
	c.analyzeBody(body)
	return c.issues
}

// analyzeBody checks an /analyze body (for Check and validateAnalysis).
func (c *conformance) analyzeBody(body []byte) {
	if obj, ok := c.object(body); ok {
		c.analyze(obj)
	}
}

// analysisVerdict is what the engine does with a response's issues.
type analysisVerdict struct {
	refused []Issue            // errors of the response as a whole
	dropped map[string][]Issue // list item ("observations[2]") → its errors
}

func verdictOf(issues []Issue) analysisVerdict {
	v := analysisVerdict{dropped: map[string][]Issue{}}
	for _, is := range issues {
		if is.Level != IssueError {
			continue
		}
		if i := strings.IndexByte(is.Field, ']'); i > 0 {
			item := is.Field[:i+1]
			v.dropped[item] = append(v.dropped[item], is)
			continue
		}
		v.refused = append(v.refused, is)
	}
	return v
}

// describeIssues joins issues as "field: message; field: message".
func describeIssues(is []Issue) string {
	parts := make([]string, len(is))
	for i, x := range is {
		if x.Field == "" {
			parts[i] = x.Message
		} else {
			parts[i] = x.Field + ": " + x.Message
		}
	}
	return strings.Join(parts, "; ")
}

// nulWarning is the warning for n NUL bytes removed from a response.
func nulWarning(n int) string {
	return fmt.Sprintf("the response had %d NUL byte(s); they were removed before reading it", n)
}
