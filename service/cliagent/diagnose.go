package cliagent

import (
	"regexp"
	"strings"
)

// What the CLIs print when they do not know a session id: claude "No
// conversation found with session ID: …"; pi "No session found matching
// '…'" and, for a session made in another folder, "Session found in
// different project: …" followed by an unanswerable fork prompt and exit
// 0; codex names a thread or rollout that is not found.
var staleSessionPattern = regexp.MustCompile(`(?i)no conversation found|no (saved )?session found|session found in different project|no (rollout|thread) found|(session|thread|conversation|rollout)\b[^\n]{0,60}\bnot found`)

// authPattern matches the messages of a refused or missing login.
var authPattern = regexp.MustCompile(`(?i)invalid api key|please run /login|not logged in|authentication[_ ](failed|required|error)|\b401\b|unauthori[sz]ed|invalid x-api-key|oauth token (has )?expired`)

// staleSession reports whether a resumed run failed because the CLI did
// not know the session: nothing was answered, and what the CLI said
// names a missing session, or it said nothing at all and exited cleanly.
func staleSession(res Result, err error) bool {
	if strings.TrimSpace(res.Text) != "" || len(res.ToolCalls) > 0 {
		return false
	}
	said := res.Stderr + "\n" + res.noise
	if err != nil {
		said += "\n" + err.Error()
	}
	if staleSessionPattern.MatchString(said) {
		return true
	}
	return err == nil && res.Usage == nil && strings.TrimSpace(res.Stderr) == ""
}
