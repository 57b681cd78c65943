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

// ansiEscape matches terminal color and cursor sequences.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

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

// FirstErrorLine picks the line of a program's stderr that says what went
// wrong: the first line that reads as an error ("Error: …", "error: …",
// "fatal: …"); otherwise the last line that is not part of a backtrace or
// a log line. A Rust backtrace (RUST_BACKTRACE=1) and a Node stack end
// stderr with frames that explain nothing to the user.
func FirstErrorLine(stderr string) string {
	lines := strings.Split(ansiEscape.ReplaceAllString(stderr, ""), "\n")
	for _, l := range lines {
		l = strings.TrimSpace(l)
		low := strings.ToLower(l)
		if strings.HasPrefix(low, "error") || strings.HasPrefix(low, "fatal") {
			return l
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !traceLine.MatchString(l) && !logLine.MatchString(l) {
			return l
		}
	}
	return lastLine(stderr)
}

var (
	// A backtrace frame or its header: "0: crate::fn", "at /path:1:2",
	// "Stack backtrace:", "note: run with `RUST_BACKTRACE=…`", "Caused by:".
	traceLine = regexp.MustCompile(`(?i)^(\d+: |at |stack backtrace:|note: run with|caused by:|\^|node:internal)`)
	// A tracing log line: a timestamp, then a level.
	logLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z?\s+(TRACE|DEBUG|INFO|WARN|ERROR)\b`)
)
