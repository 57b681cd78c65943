package acpagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	adaptersOnce sync.Once
	adaptersErr  error
)

// adapters makes sure testdata/adapters' npm packages (real ACP adapters
// from the npm registry) are installed — scripts/setup.sh runs npm ci; here
// again when node_modules is missing or older than the lock file — and
// returns their bin folder.
func adapters(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is required for the real-adapter tests (scripts/setup.sh checks for it)")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "adapters"))
	if err != nil {
		t.Fatal(err)
	}
	adaptersOnce.Do(func() {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		if err != nil {
			adaptersErr = err
			return
		}
		if inst, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !inst.ModTime().Before(lock.ModTime()) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			adaptersErr = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
	})
	if adaptersErr != nil {
		t.Fatal(adaptersErr)
	}
	return filepath.Join(dir, "node_modules", ".bin")
}

// withoutLogin runs the adapter with an empty home and none of the
// model providers' keys: no login it could use.
func withoutLogin(t *testing.T) []string {
	for _, k := range []string{"OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
}

// codex-acp answers initialize (protocol 1, its sign-in methods) and
// refuses session/new with -32000 "Authentication required": the user reads
// which methods there are and what to run, never the JSON-RPC error.
func TestRealCodexACPNeedsSignIn(t *testing.T) {
	bin := adapters(t)
	env := withoutLogin(t)
	a, err := New(Options{Command: filepath.Join(bin, "codex-acp"), WorkDir: t.TempDir(), Env: env, InitTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, nil)
	t.Logf("codex-acp: %v", err)
	var ae *AuthRequiredError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *AuthRequiredError", err)
	}
	for _, want := range []string{"Login with ChatGPT", "codex login", "CODEX_API_KEY", "OPENAI_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if a.Running() {
		t.Error("the adapter is kept running after refusing the session")
	}
}

// claude-code-acp answers initialize; run as root (as here), its
// session/new fails with -32603 after printing that it cannot skip
// permissions as root: the message names that cause and says what to do.
func TestRealClaudeCodeACPAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("measured as root; a normal user gets the sign-in path")
	}
	bin := adapters(t)
	env := withoutLogin(t)
	a, err := New(Options{Command: filepath.Join(bin, "claude-code-acp"), WorkDir: t.TempDir(), Env: env, InitTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, nil)
	t.Logf("claude-code-acp: %v", err)
	if err == nil || !strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "session/new") || strings.Contains(err.Error(), `{"code"`) {
		t.Fatalf("err = %v, want session/new's failure naming root, in words", err)
	}
	// What to do, not only the agent's refusal.
	if !strings.Contains(err.Error(), "run Jarvis as your own user") || strings.Contains(err.Error(), "Query closed") {
		t.Fatalf("err = %v: does not say what to do", err)
	}
}
