package cliagent

import (
	"fmt"
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

// permArgs are the flags that set mode for kind.
func permArgs(kind Kind, mode string) []string {
	if mode == "" {
		mode = PermReadOnly
	}
	switch kind {
	case KindClaude:
		m := map[string]string{PermReadOnly: "default", PermEdit: "acceptEdits", PermFull: "bypassPermissions"}[mode]
		return []string{"--permission-mode", m}
	case KindCodex:
		// codex exec never asks for approval (nobody could answer): the
		// sandbox decides.
		switch mode {
		case PermEdit:
			return []string{"--sandbox", "workspace-write"}
		case PermFull:
			return []string{"--dangerously-bypass-approvals-and-sandbox"}
		}
		return []string{"--sandbox", "read-only"}
	case KindPi:
		switch mode {
		case PermEdit:
			return []string{"--tools", "read,grep,find,ls,edit,write"}
		case PermFull:
			return nil // pi's default tools, bash included
		}
		return []string{"--tools", "read,grep,find,ls"}
	}
	return nil
}

// reservedFlags are the flags cliagent sets itself (or that would bypass
// the permission mode, the session handling or the JSON stream), per kind:
// an agent's args may not repeat or override them.
var reservedFlags = map[Kind][]string{
	KindClaude: {"-p", "--print", "--output-format", "--input-format", "--verbose", "--include-partial-messages",
		"-r", "--resume", "-c", "--continue", "--session-id", "--fork-session", "--append-system-prompt", "--system-prompt",
		"--permission-mode", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "--model"},
	KindCodex: {"--json", "--experimental-json", "--skip-git-repo-check", "-s", "--sandbox", "--full-auto",
		"--dangerously-bypass-approvals-and-sandbox", "-a", "--ask-for-approval", "-C", "--cd", "-m", "--model"},
	KindPi: {"-p", "--print", "--mode", "--session", "--session-id", "-c", "--continue", "-r", "--resume", "--no-session",
		"--append-system-prompt", "--system-prompt", "--tools", "--no-tools", "--exclude-tools", "--model"},
}

const (
	maxArgs   = 64
	maxArgLen = 4096
)

// CheckArgs validates an agent's extra CLI arguments for kind: flags
// (starting with "-") and the values that follow them, none of the flags
// cliagent sets itself or that override the permission mode (use the
// agent's permissionMode, model and workDir instead), no empty or
// oversized argument, no NUL byte. A bare word that does not follow a flag
// is refused: it would become the prompt or a subcommand.
func CheckArgs(kind Kind, args []string) error {
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
