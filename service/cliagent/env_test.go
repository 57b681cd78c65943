package cliagent

import (
	"strings"
	"testing"
)

// TestCLIEnvironmentLacksJarvisSecrets: a CLI agent (another program, run
// on the model's behalf) must not inherit the service's API token or the
// secrets handed to it through JARVIS_SECRET_*; the CLI's own credentials
// (ANTHROPIC_API_KEY and the like) pass. Not parallel: it sets the
// process's environment.
func TestCLIEnvironmentLacksJarvisSecrets(t *testing.T) {
	t.Setenv("JARVIS_TOKEN", "tok-must-not-leak")
	t.Setenv("JARVIS_SECRET_OPENAI", "sk-must-not-leak")
	t.Setenv("jarvis_secret_lower", "lower-must-not-leak")
	t.Setenv("ANTHROPIC_API_KEY", "cli-own-key")
	f := newFake(t, `@sh env > "$FAKE_DIR/env"
{"type":"result","subtype":"success","is_error":false,"result":"42","session_id":"s"}`)
	if _, _, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "answer"}); err != nil {
		t.Fatal(err)
	}
	env := readFile(t, f.dir, "env")
	if strings.Contains(env, "must-not-leak") {
		t.Fatalf("the CLI's environment holds Jarvis secrets:\n%s", env)
	}
	if !strings.Contains(env, "ANTHROPIC_API_KEY=cli-own-key") || !strings.Contains(env, "FAKE_DIR=") {
		t.Fatalf("the CLI's own variables are missing:\n%s", env)
	}
}
