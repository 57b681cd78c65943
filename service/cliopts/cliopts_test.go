package cliopts

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind    string
		args    []string
		wantErr string
	}{
		{"claude-cli", []string{"--max-turns", "8", "--add-dir", "/srv/x"}, ""},
		{"codex-cli", []string{"--color", "never", "-c", `model_reasoning_effort="high"`}, ""},
		{"pi-cli", []string{"--thinking=high", "--no-extensions"}, ""},
		{"claude-cli", []string{"--permission-mode", "bypassPermissions"}, "chat.permissionMode"},
		{"claude-cli", []string{"--dangerously-skip-permissions"}, "chat.permissionMode"},
		{"codex-cli", []string{"--sandbox=danger-full-access"}, "chat.permissionMode"},
		{"codex-cli", []string{"-C", "/"}, "chat.workDir"},
		{"pi-cli", []string{"--tools", "bash"}, "chat.permissionMode"},
		{"pi-cli", []string{"--model", "x"}, "chat.model"},
		{"claude-cli", []string{"--resume", "abc"}, "keeps the session"},
		{"codex-cli", []string{"resume"}, "not a flag"},
		{"codex-cli", []string{"--color", "never", "extra"}, "not a flag"},
		{"claude-cli", []string{""}, "empty"},
		{"claude-cli", []string{"--x\x00y"}, "NUL"},
		{"claude-cli", []string{"--"}, "option's value"},
		{"claude-cli", []string{"--x", strings.Repeat("a", maxArgLen+1)}, "longer"},
		{"claude-cli", slices.Repeat([]string{"--verbose-x"}, maxArgs+1), "at most"},
	}
	for _, tt := range tests {
		err := CheckArgs(tt.kind, tt.args)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("CheckArgs(%s, %q) = %v", tt.kind, tt.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckArgs(%s, %q) = %v, want an error with %q", tt.kind, tt.args, err, tt.wantErr)
		}
	}
}
