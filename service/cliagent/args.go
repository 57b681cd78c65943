package cliagent

import "jarvis/service/cliopts"

// permArgs are the flags that set mode for kind.
func permArgs(kind Kind, mode string) []string {
	if mode == "" {
		mode = cliopts.PermReadOnly
	}
	switch kind {
	case KindClaude:
		m := map[string]string{cliopts.PermReadOnly: "default", cliopts.PermEdit: "acceptEdits", cliopts.PermFull: "bypassPermissions"}[mode]
		return []string{"--permission-mode", m}
	case KindCodex:
		// codex exec never asks for approval (nobody could answer): the
		// sandbox decides.
		switch mode {
		case cliopts.PermEdit:
			return []string{"--sandbox", "workspace-write"}
		case cliopts.PermFull:
			return []string{"--dangerously-bypass-approvals-and-sandbox"}
		}
		return []string{"--sandbox", "read-only"}
	case KindPi:
		switch mode {
		case cliopts.PermEdit:
			return []string{"--tools", "read,grep,find,ls,edit,write"}
		case cliopts.PermFull:
			return nil // pi's default tools, bash included
		}
		return []string{"--tools", "read,grep,find,ls"}
	}
	return nil
}
