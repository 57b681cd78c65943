// Package roundtabletest holds what tests of round tables share: the
// answers of a well-behaved scripted round-table agent (the agent protocol's
// /analyze, /challenge and /vote), written by the tests' own HTTP handlers.
package roundtabletest

import (
	"fmt"
	"net/http"
)

// Answer writes agent name's answer to a call of path (/analyze: one
// critical SQL-injection finding with verified evidence; /challenge: none;
// /vote: approve with a condition) and reports false for any other path,
// writing nothing.
func Answer(w http.ResponseWriter, path, name string) bool {
	var body string
	switch path {
	case "/analyze":
		body = fmt.Sprintf(`{"agent_name":%q,"domain":"security","observations":[{"finding":"%s finds SQL injection in the login query","evidence":"[VERIFIED: auth.py:42] string concatenation","severity":"critical","confidence":0.9}],"recommendations":[{"action":"Use parameterized queries","rationale":"OWASP A03","priority":"critical"}],"confidence":0.8}`, name, name)
	case "/challenge":
		body = fmt.Sprintf(`{"agent_name":%q,"challenges":[],"concessions":[]}`, name)
	case "/vote":
		body = fmt.Sprintf(`{"agent_name":%q,"approve":true,"conditions":["tests first"]}`, name)
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
	return true
}
