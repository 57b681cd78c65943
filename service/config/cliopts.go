package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"jarvis/service/cliopts"
)

type fieldErr struct {
	field string
	err   error
}

// checkCLIOptions validates the CLI-only chat fields (args, permissionMode):
// only CLI providers take them, and the CLI package says what is valid.
func (c *Config) checkCLIOptions(a Agent) *fieldErr {
	if a.Chat == nil {
		return nil
	}
	p := c.ResolvedChat(a).Provider
	if p == ProviderACP {
		return checkACP(a.Chat)
	}
	if a.Chat.Command != "" || len(a.Chat.Env) > 0 {
		field := "command"
		if a.Chat.Command == "" {
			field = "env"
		}
		return &fieldErr{field, errors.New("only the acp provider takes it")}
	}
	if len(a.Chat.Args) == 0 && a.Chat.PermissionMode == "" {
		return nil
	}
	field := "args"
	if len(a.Chat.Args) == 0 {
		field = "permissionMode"
	}
	if !slices.Contains([]string{ProviderClaudeCLI, ProviderCodexCLI, ProviderPiCLI}, p) {
		return &fieldErr{field, errors.New("only the claude-cli, codex-cli and pi-cli providers take it (provider " + p + ")")}
	}
	if err := cliopts.CheckArgs(p, a.Chat.Args); err != nil {
		return &fieldErr{"args", err}
	}
	if err := cliopts.CheckPermissionMode(a.Chat.PermissionMode); err != nil {
		return &fieldErr{"permissionMode", err}
	}
	return nil
}

// checkACP validates an acp agent: a command, args without NUL bytes,
// environment names that are names.
func checkACP(ch *Chat) *fieldErr {
	if strings.TrimSpace(ch.Command) == "" {
		return &fieldErr{"command", errors.New(`the acp provider needs the agent's command, e.g. "npx" with args ["-y", "@zed-industries/codex-acp"]`)}
	}
	for i, a := range ch.Args {
		if strings.ContainsRune(a, 0) {
			return &fieldErr{"args", fmt.Errorf("args[%d] holds a NUL byte", i)}
		}
	}
	for k, v := range ch.Env {
		if !envName.MatchString(k) {
			return &fieldErr{"env", fmt.Errorf("%q is not an environment variable name", k)}
		}
		if ref, ok := strings.CutPrefix(v, "secret:"); ok && ref == "" {
			return &fieldErr{"env", fmt.Errorf("%s: \"secret:\" names no secret", k)}
		}
	}
	if ch.PermissionMode != "" {
		return &fieldErr{"permissionMode", errors.New("the acp provider asks Jarvis's gate for each permission instead")}
	}
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
