package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartedProgramsLackJarvisSecrets: every program the executor starts
// (run_command, a launcher for open_url/open_app, a helper for notify and
// the clipboard) gets an environment without JARVIS_TOKEN and
// JARVIS_SECRET_*; run_command's also lacks other credential-looking
// variables (TestRunCommandEnvironment).
func TestStartedProgramsLackJarvisSecrets(t *testing.T) {
	t.Setenv("JARVIS_TOKEN", "tok-must-not-leak")
	t.Setenv("JARVIS_SECRET_OPENAI", "sk-must-not-leak")
	t.Setenv("PLAIN_VAR", "inherited")
	bin := newFakeBin(t)
	envDump := "#!/bin/sh\nenv > \"$(dirname \"$0\")/$(basename \"$0\").env\"\ncat >/dev/null\n"
	for _, n := range []string{"printenv", "xdg-open", "notify-send"} {
		bin.script(n, envDump)
	}
	bin.script("printenv", "#!/bin/sh\nenv\n")
	x := newExec(t, t.TempDir(), bin, func(o *Options) { o.GOOS = "linux" })
	out, err := x.Execute(context.Background(), "run_command", json.RawMessage(`{"program":"printenv"}`))
	if err != nil {
		t.Fatal(err)
	}
	check := func(starter, env string) {
		t.Helper()
		if strings.Contains(env, "must-not-leak") || !strings.Contains(env, "PLAIN_VAR=inherited") {
			t.Errorf("%s: environment:\n%s", starter, env)
		}
	}
	check("run_command", out)
	for tool, args := range map[string]string{"open_url": `{"url":"https://example.com"}`, "notify": `{"title":"t"}`} {
		if _, err := x.Execute(context.Background(), tool, json.RawMessage(args)); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	for _, prog := range []string{"xdg-open", "notify-send"} {
		b, err := os.ReadFile(filepath.Join(bin.dir, prog+".env"))
		if err != nil {
			t.Fatalf("%s did not run: %v", prog, err)
		}
		check(prog, string(b))
	}
}
