//go:build linux

package service_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/service"
	"jarvis/tools"
)

// A CLI agent of the service given a sandbox runs in it: its turn says so
// ("network allowed"), as does the audit row of its tool; it writes in its
// working folder (by default inside the data folder) and not in the rest
// of the service's data folder, which the service protects itself.
func TestCLIAgentRunsInTheServicesSandbox(t *testing.T) {
	bwrap, err := tools.Bubblewrap()
	if err != nil {
		t.Skipf("needs bubblewrap: %v", err)
	}
	dir := fakeClaude(t)
	t.Setenv("HOME", t.TempDir())
	e := newEnv(t, func(e *env, o *service.Options) { o.Sandbox = &tools.Sandbox{Bwrap: bwrap} })
	// The scripted claude also writes in its working folder and tries the
	// service's data folder.
	script := "#!/bin/sh\necho x > \"$PWD/written\"\necho x > '" + filepath.Join(e.dir, "escaped") + "'\ncat '" + filepath.Join(dir, "out.jsonl") + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("coder")
	evs := e.agChat(r.Session.SessionID, "list files")
	if f := text(evs, api.EventFinal); f != "Let me look.\n\nOne file: a.go." {
		t.Fatalf("final %q (events %v)", f, types(evs))
	}
	var status, result string
	for _, ev := range evs {
		switch ev.Type {
		case api.EventStatus:
			if s := decode[api.StatusEvent](t, ev.Data).Text; strings.HasPrefix(s, "claude-cli runs") {
				status = s
			}
		case api.EventToolResult:
			result = decode[api.ToolResult](t, ev.Data).Result
		}
	}
	if !strings.Contains(status, "runs in Jarvis's sandbox (bubblewrap") || !strings.Contains(status, "network allowed") {
		t.Errorf("the turn's status %q", status)
	}
	if !strings.Contains(result, status) {
		t.Errorf("the tool's audit result %q does not say where the CLI ran", result)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "cli", "coder", "written")); err != nil {
		t.Errorf("the CLI did not write in its working folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "escaped")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the CLI wrote in the service's data folder (%v)", err)
	}
}
