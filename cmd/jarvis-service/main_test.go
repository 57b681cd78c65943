package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

var binPath string

// TestMain builds the real binary once; the tests run it as a subprocess.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jarvis-service-test")
	if err != nil {
		panic(err)
	}
	if binPath, err = proc.BuildService(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The first stdout line, exactly as the README ("The service alone") fixes it.
var listening = regexp.MustCompile(`^jarvis-service listening on http://127\.0\.0\.1:\d+$`)

func start(t *testing.T, env []string, args ...string) *proc.Proc {
	t.Helper()
	p, err := proc.Start(binPath, args, env, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if !listening.MatchString(p.Line) {
		t.Fatalf("first stdout line %q does not match the contract", p.Line)
	}
	return p
}

func writeConfig(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBinaryRoundTripOverRealPort(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, up.URL+"/v1"))
	data := filepath.Join(dir, "data")
	p := start(t, []string{"JARVIS_TOKEN="}, "--addr", "127.0.0.1:0", "--data-dir", data, "--trust-config", "--config", cfg)

	// A token was created with mode 0600.
	st, err := os.Stat(filepath.Join(data, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", st.Mode().Perm())
	}
	tok, _ := os.ReadFile(filepath.Join(data, "token"))
	c := api.NewClient(p.URL, strings.TrimSpace(string(tok)), nil)
	ctx := context.Background()
	h, err := c.Health(ctx)
	if err != nil || !h.Healthy || h.Version == "" {
		t.Fatalf("health %v %+v", err, h)
	}
	s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j1"})
	if err != nil {
		t.Fatal(err)
	}
	var final string
	err = c.ChatStream(ctx, s.GeneralSessionID, `open it [[tool open_url {"url":"https://go.dev"}]]`, func(ev api.StreamEvent) error {
		switch ev.Type {
		case api.EventToolRequest:
			var tc api.ToolCall
			jsonDecode(ev.Data, &tc)
			return c.PostToolResult(ctx, s.GeneralSessionID, api.ToolResult{ID: tc.ID, OK: true, Result: "opened"})
		case api.EventFinal:
			var te api.TextEvent
			jsonDecode(ev.Data, &te)
			final = te.Text
		}
		return nil
	})
	if err != nil || final != "Tool results: opened" {
		t.Fatalf("%v final %q", err, final)
	}
	// SIGTERM: a clean exit, and the same token and session after a restart.
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if err := p.Cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr %s", err, p.Stderr())
	}
	p2 := start(t, []string{"JARVIS_TOKEN="}, "--addr", "127.0.0.1:0", "--data-dir", data, "--trust-config", "--config", cfg)
	c2 := api.NewClient(p2.URL, strings.TrimSpace(string(tok)), nil)
	s2, err := c2.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j1"})
	if err != nil || s2.GeneralSessionID != s.GeneralSessionID {
		t.Fatalf("after restart %v %+v", err, s2)
	}
	if strings.Contains(p.Stderr(), string(tok[:16])) {
		t.Fatal("the token appears in the log")
	}
}

func TestBinaryRefusals(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name   string
		args   []string
		config string
		want   []string
	}{
		{"non-loopback addr", []string{"--addr", "0.0.0.0:0"}, "", []string{"not a loopback address", "--allow-non-loopback"}},
		{"malformed config", nil, "{\n  \"agents\": [\n    {\"agentId\": \"a\",}\n  ]\n}", []string{"config.json:3", "invalid JSON"}},
		{"unknown field", nil, "{\n  \"agents\": [],\n  \"toolTimeout\": 5\n}", []string{"config.json:3", "field toolTimeout", "unknown field"}},
		{"wrong type", nil, "{\n  \"maxToolSteps\": \"many\"\n}", []string{"config.json:2", "field maxToolSteps"}},
		{"unknown provider", nil, "{\n  \"agents\": [\n    {\"agentId\": \"x\", \"displayName\": \"X\", \"chat\": {\"provider\": \"gpt\"}}\n  ]\n}", []string{"config.json:3", "agents[0].chat.provider", `unknown provider "gpt"`}},
		{"duplicate agent", nil, `{"agents":[{"agentId":"a","displayName":"A"},{"agentId":"a","displayName":"B"}]}`, []string{`duplicate agentId "a"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--data-dir", filepath.Join(dir, "d"), "--addr", "127.0.0.1:0"}, tc.args...)
			if tc.config != "" {
				args = append(args, "--trust-config", "--config", writeConfig(t, t.TempDir(), tc.config))
			} else {
				args = append(args, "--trust-config", "--config", filepath.Join(dir, "none.json"))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, binPath, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("started; output %s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestSchedulerThreads(t *testing.T) {
	for _, c := range []struct {
		current int
		env     string
		want    int
	}{
		{1, "", 1}, // one core: the service keeps it
		{2, "", 1}, // leaves one core to the client and the model server
		{8, "", 7},
		{2, "2", 2}, // GOMAXPROCS set: obeyed
		{5, "5", 5},
	} {
		if got := schedulerThreads(c.current, c.env); got != c.want {
			t.Errorf("schedulerThreads(%d, %q) = %d, want %d", c.current, c.env, got, c.want)
		}
	}
}

// The binary applies it, and says so in its start line; GOMAXPROCS wins.
func TestBinarySchedulerThreads(t *testing.T) {
	want := max(1, runtime.GOMAXPROCS(0)-1)
	if os.Getenv("GOMAXPROCS") != "" {
		want = runtime.GOMAXPROCS(0)
	}
	for _, c := range []struct {
		env  []string
		want int
	}{{nil, want}, {[]string{"GOMAXPROCS=3"}, 3}} {
		p := start(t, append([]string{"JARVIS_TOKEN=t"}, c.env...), "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--trust-config", "--config", filepath.Join(t.TempDir(), "none.json"))
		line := fmt.Sprintf("gomaxprocs=%d\n", c.want)
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(p.Stderr(), "service started") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(p.Stderr(), line) {
			t.Errorf("env %v: want %q in the start line; stderr:\n%s", c.env, line, p.Stderr())
		}
	}
}
