package clirt_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service/clirt"
	"jarvis/service/config"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
	"jarvis/tools"
)

// fakeClaude puts a scripted claude first on PATH; it logs its argv, one
// argument a line and "---" after each run.
func fakeClaude(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("scripted CLIs are POSIX shell scripts")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + dir + "/argv.log'\necho --- >> '" + dir + "/argv.log'\ncat '" + dir + "/out.jsonl'\n"
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out.jsonl"), []byte(testpeer.ClaudeTurn), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func newRuntime(t *testing.T) (*clirt.Runtime, *store.Store, *turntest.Recorder, *config.Config) {
	t.Helper()
	cfg, err := config.Parse("test.json", []byte(`{"agents":[
		{"agentId":"coder","displayName":"Coder","chat":{"provider":"claude-cli","model":"sonnet"}},
		{"agentId":"codexer","displayName":"Codexer","chat":{"provider":"codex-cli"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := &turntest.Recorder{}
	env := turn.Env{Store: st, Publisher: rec, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler), DataDir: dir}
	brief := func(*config.Config, config.Agent) string { return "Be brief." }
	rt := clirt.New(env, brief, brief)
	return rt, st, rec, cfg
}

// userTurn stores a user's message for a new turn of the session, as the
// service does before a runtime runs.
func userTurn(t *testing.T, st *store.Store, sessionID, id, text string) *turn.Turn {
	t.Helper()
	if _, err := st.AddMessage(context.Background(), store.Message{SessionID: sessionID, TurnID: id, Role: "user", Content: text}); err != nil {
		t.Fatal(err)
	}
	return &turn.Turn{ID: id, SessionID: sessionID}
}

func TestRunRelaysTheCLIAndResumesItsSession(t *testing.T) {
	dir := fakeClaude(t)
	rt, st, rec, cfg := newRuntime(t)
	coder, _ := cfg.Agent("coder")
	sess, err := st.CreateSession(context.Background(), store.Session{ID: "s1", AgentID: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	t1 := userTurn(t, st, sess.ID, "t_1", "what is here?")
	out := rt.Run(context.Background(), t1, sess, coder)
	if out.Fail != nil || out.Final != "Let me look.\n\nOne file: a.go." || out.Last == nil {
		t.Fatalf("outcome %+v fail %+v", out, out.Fail)
	}
	var meta struct {
		CLI struct {
			Provider, ResumeID string
		}
		ToolCallCount int
		ThinkingText  string
	}
	if err := json.Unmarshal([]byte(out.Last.Meta), &meta); err != nil || meta.CLI.ResumeID != "sess-1" || meta.CLI.Provider != "claude-cli" || meta.ToolCallCount != 1 || meta.ThinkingText != "Look first." {
		t.Fatalf("answer meta %s (%v)", out.Last.Meta, err)
	}
	if calls, thinking := t1.Stats.Snapshot(); len(calls) != 1 || calls[0].Name != "Bash" || thinking != "Look first." {
		t.Fatalf("turn stats %+v %q", calls, thinking)
	}
	// The tool the CLI ran is reported (tool.result, source "agent") for the desktop's audit log.
	// The turn says first where the CLI runs (here: no sandbox was given).
	if want := []string{"status claude-cli runs without Jarvis's sandbox: it can do whatever you can", "assistant.delta Let me look.", "status Coder is using Bash", "tool.result", "assistant.delta \n\nOne file: a.go."}; !slices.Equal(rec.Lines("text"), want) {
		t.Fatalf("published %q, want %q", rec.Lines("text"), want)
	}

	// The next turn resumes the CLI's session, from the stored answer's meta.
	if _, err := st.AddMessage(context.Background(), *out.Last); err != nil {
		t.Fatal(err)
	}
	if out := rt.Run(context.Background(), userTurn(t, st, sess.ID, "t_2", "and now?"), sess, coder); out.Fail != nil {
		t.Fatalf("second turn failed: %+v", out.Fail)
	}
	b, err := os.ReadFile(filepath.Join(dir, "argv.log"))
	if err != nil {
		t.Fatal(err)
	}
	runs := strings.Split(strings.TrimSuffix(string(b), "---\n"), "---\n")
	if len(runs) != 2 || strings.Contains(runs[0], "--resume") || !strings.Contains(runs[1], "--resume\nsess-1\n") || !strings.Contains(runs[1], "Be brief.") {
		t.Fatalf("CLI runs:\n%s", b)
	}
}

func TestStatusAndValidateSayWhenTheCLIIsMissing(t *testing.T) {
	fakeClaude(t) // claude only: codex is not on PATH
	if _, err := exec.LookPath("codex"); err == nil {
		t.Skip("a real codex is installed")
	}
	rt, st, _, cfg := newRuntime(t)
	coder, _ := cfg.Agent("coder")
	codexer, _ := cfg.Agent("codexer")
	if st := rt.Status(coder); st.State != "ok" || rt.Validate(coder) != nil {
		t.Fatalf("installed CLI: %+v %v", st, rt.Validate(coder))
	}
	if st := rt.Status(codexer); st.State != "unconfigured" || !strings.Contains(st.Detail, "codex") || rt.Validate(codexer) == nil {
		t.Fatalf("missing CLI: %+v", st)
	}
	// A message to a CLI agent leaves the process: the gate is told where.
	if where := rt.Outbound(cfg, coder); !strings.Contains(where, `CLI agent "coder"`) || !strings.Contains(where, "claude-cli") {
		t.Fatalf("outbound %q", where)
	}
	var info api.AgentInfo
	rt.Describe(coder, &info)
	if info.Provider != "claude-cli" || info.Model != "sonnet" {
		t.Fatalf("described %+v", info)
	}
	sess, err := st.CreateSession(context.Background(), store.Session{ID: "s2", AgentID: "codexer"})
	if err != nil {
		t.Fatal(err)
	}
	out := rt.Run(context.Background(), userTurn(t, st, sess.ID, "t_1", "hi"), sess, codexer)
	if out.Fail == nil || out.Fail.Code != "cli_not_installed" {
		t.Fatalf("outcome %+v", out.Fail)
	}
}

// TestSandboxFalseRunsTheCLIUnconfined: an agent whose (approved) entry
// says "sandbox": false runs its CLI without Jarvis's sandbox, and its
// status says so; the others run in the sandbox the service gave.
func TestSandboxFalseRunsTheCLIUnconfined(t *testing.T) {
	fakeClaude(t)
	cfg, err := config.Parse("test.json", []byte(`{"agents":[
		{"agentId":"boxed","displayName":"Boxed","chat":{"provider":"claude-cli"}},
		{"agentId":"free","displayName":"Free","chat":{"provider":"claude-cli","permissionMode":"full","sandbox":false}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sb := tools.Sandbox{Helper: []string{"/usr/bin/jarvis-confine"}}
	env := turn.Env{Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler), DataDir: t.TempDir(), Sandbox: &sb}
	rt := clirt.New(env, nil, nil)
	boxed, _ := cfg.Agent("boxed")
	free, _ := cfg.Agent("free")
	if st := rt.Status(boxed); st.State != "ok" || !strings.Contains(st.Detail, "runs in Jarvis's sandbox") || !strings.Contains(st.Detail, "network allowed") {
		t.Errorf("boxed: %+v", st)
	}
	if st := rt.Status(free); st.State != "ok" || !strings.Contains(st.Detail, "without Jarvis's sandbox") {
		t.Errorf("free: %+v", st)
	}
}
