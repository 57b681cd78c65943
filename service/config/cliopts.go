package config

import (
	"errors"
	"slices"

	"jarvis/service/cliagent"
)

type fieldErr struct {
	field string
	err   error
}

// checkCLIOptions validates the CLI-only chat fields (args, permissionMode):
// only CLI providers take them, and the CLI package says what is valid.
func (c *Config) checkCLIOptions(a Agent) *fieldErr {
	if a.Chat == nil || (len(a.Chat.Args) == 0 && a.Chat.PermissionMode == "") {
		return nil
	}
	field := "args"
	if len(a.Chat.Args) == 0 {
		field = "permissionMode"
	}
	p := c.ResolvedChat(a).Provider
	if !slices.Contains([]string{ProviderClaudeCLI, ProviderCodexCLI, ProviderPiCLI}, p) {
		return &fieldErr{field, errors.New("only the claude-cli, codex-cli and pi-cli providers take it (provider " + p + ")")}
	}
	if err := cliagent.CheckArgs(cliagent.Kind(p), a.Chat.Args); err != nil {
		return &fieldErr{"args", err}
	}
	if err := cliagent.CheckPermissionMode(a.Chat.PermissionMode); err != nil {
		return &fieldErr{"permissionMode", err}
	}
	return nil
}
