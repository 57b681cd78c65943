// Package cliopts holds what Jarvis gives the coding-agent programs it
// starts (the claude / codex / pi CLIs, ACP agents) and reads back from
// them, shared by their engines and the config's validation: the permission
// modes, the check of an agent's extra arguments, and the line of a
// program's stderr that says what went wrong.
package cliopts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Permission modes: how much the CLI's own tools may do on the machine.
// The CLI runs those tools itself, outside Jarvis's gate, so the default is
// the one that cannot change anything.
const (
	// PermReadOnly: the CLI may read files but not write them or run
	// commands that change anything (claude --permission-mode default, which
	// denies writes when nobody can be asked; codex --sandbox read-only; pi
	// with only its read, grep, find and ls tools). The default.
	PermReadOnly = "read-only"
	// PermEdit: the CLI may edit files in its working directory (claude
	// acceptEdits; codex --sandbox workspace-write; pi adds edit and write).
	PermEdit = "edit"
	// PermFull: everything the CLI can do, commands included, unconfined
	// (claude bypassPermissions, which claude refuses as root; codex
	// --dangerously-bypass-approvals-and-sandbox; pi's default tools).
	PermFull = "full"
)

// PermissionModes lists the valid Options.PermissionMode values.
var PermissionModes = []string{PermReadOnly, PermEdit, PermFull}

// CheckPermissionMode reports whether mode is one of PermissionModes ("" is
// the default, read-only).
func CheckPermissionMode(mode string) error {
	if mode == "" || slices.Contains(PermissionModes, mode) {
		return nil
	}
	return fmt.Errorf("unknown permission mode %q (want %s)", mode, strings.Join(PermissionModes, ", "))
}

// reservedFlags are the flags package cliagent sets itself (or that would bypass
// the permission mode, the session handling or the JSON stream), per kind:
// an agent's args may not repeat or override them.
var reservedFlags = map[string][]string{
	"claude-cli": {"-p", "--print", "--output-format", "--input-format", "--verbose", "--include-partial-messages",
		"-r", "--resume", "-c", "--continue", "--session-id", "--fork-session", "--append-system-prompt", "--system-prompt",
		"--permission-mode", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "--model"},
	"codex-cli": {"--json", "--experimental-json", "--skip-git-repo-check", "-s", "--sandbox", "--full-auto",
		"--dangerously-bypass-approvals-and-sandbox", "-a", "--ask-for-approval", "-C", "--cd", "-m", "--model"},
	"pi-cli": {"-p", "--print", "--mode", "--session", "--session-id", "-c", "--continue", "-r", "--resume", "--no-session",
		"--append-system-prompt", "--system-prompt", "--tools", "--no-tools", "--exclude-tools", "--model"},
}

const (
	maxArgs   = 64
	maxArgLen = 4096
)

// CheckArgs validates an agent's extra CLI arguments for kind: flags
// (starting with "-") and the values that follow them, none of the flags
// Jarvis sets itself or that override the permission mode (use the
// agent's permissionMode, model and workDir instead), no empty or
// oversized argument, no NUL byte. A bare word that does not follow a flag
// is refused: it would become the prompt or a subcommand.
func CheckArgs(kind string, args []string) error {
	reserved, ok := reservedFlags[kind]
	if !ok {
		return fmt.Errorf("unknown kind %q", kind)
	}
	if len(args) > maxArgs {
		return fmt.Errorf("%d args, at most %d", len(args), maxArgs)
	}
	prevFlag := false
	for i, a := range args {
		switch {
		case a == "" || strings.TrimSpace(a) == "":
			return fmt.Errorf("args[%d] is empty", i)
		case len(a) > maxArgLen:
			return fmt.Errorf("args[%d] is longer than %d bytes", i, maxArgLen)
		case strings.ContainsRune(a, 0):
			return fmt.Errorf("args[%d] holds a NUL byte", i)
		}
		if a == "--" {
			return fmt.Errorf(`args[%d]: "--" would make the prompt an option's value`, i)
		}
		if strings.HasPrefix(a, "-") {
			name, _, hasValue := strings.Cut(a, "=")
			if slices.Contains(reserved, name) {
				return fmt.Errorf("args[%d]: %s is set by Jarvis (%s)", i, name, reservedHint(name))
			}
			prevFlag = !hasValue
			continue
		}
		if !prevFlag {
			return fmt.Errorf("args[%d] %q is not a flag nor a flag's value", i, a)
		}
		prevFlag = false
	}
	return nil
}

func reservedHint(flag string) string {
	switch flag {
	case "--permission-mode", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions",
		"-s", "--sandbox", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "-a", "--ask-for-approval",
		"--tools", "--no-tools", "--exclude-tools":
		return "use the agent's chat.permissionMode"
	case "-m", "--model":
		return "use the agent's chat.model"
	case "-C", "--cd":
		return "use the agent's chat.workDir"
	case "--append-system-prompt", "--system-prompt":
		return "use the agent's systemPrompt"
	}
	return "it runs the CLI in its JSON mode and keeps the session itself"
}

// ANSIEscape matches terminal color and cursor sequences.
var ANSIEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// FirstErrorLine picks the line of a program's stderr that says what went
// wrong: the first line that reads as an error ("Error: …", "error: …",
// "fatal: …"); otherwise the last line that is not part of a backtrace or
// a log line. A Rust backtrace (RUST_BACKTRACE=1) and a Node stack end
// stderr with frames that explain nothing to the user.
func FirstErrorLine(stderr string) string {
	lines := strings.Split(ANSIEscape.ReplaceAllString(stderr, ""), "\n")
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
	return LastLine(stderr)
}

var (
	// A backtrace frame or its header: "0: crate::fn", "at /path:1:2",
	// "Stack backtrace:", "note: run with `RUST_BACKTRACE=…`", "Caused by:".
	traceLine = regexp.MustCompile(`(?i)^(\d+: |at |stack backtrace:|note: run with|caused by:|\^|node:internal)`)
	// A tracing log line: a timestamp, then a level.
	logLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z?\s+(TRACE|DEBUG|INFO|WARN|ERROR)\b`)
)

func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
