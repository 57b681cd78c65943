package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/service/roundtable"
)

func newTestAgent(t *testing.T, key string) *httptest.Server {
	t.Helper()
	a := &agent{name: "tester", domain: "security", apiKey: key, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestEndpoints(t *testing.T) {
	srv := newTestAgent(t, "k")
	tests := []struct {
		name, path, key, body string
		status                int
		check                 func(t *testing.T, out map[string]any)
	}{
		{"no key", "/analyze", "", `{"task_id":"1","content":"x"}`, 401, nil},
		{"wrong key", "/analyze", "nope", `{"task_id":"1","content":"x"}`, 401, nil},
		{"bad json", "/analyze", "k", `{"task_id":`, 400, nil},
		{"no content", "/analyze", "k", `{"task_id":"1"}`, 400, nil},
		{"analyze sql", "/analyze", "k", `{"task_id":"1","content":"q := \"SELECT * FROM t WHERE id=\" + id"}`, 200, func(t *testing.T, out map[string]any) {
			obs := out["observations"].([]any)
			first := obs[0].(map[string]any)
			if out["agent_name"] != "tester" || first["severity"] != "critical" || !strings.HasPrefix(first["evidence"].(string), "[INDICATED:") {
				t.Errorf("analysis = %v", out)
			}
			if len(out["recommendations"].([]any)) != 1 {
				t.Errorf("recommendations = %v", out["recommendations"])
			}
		}},
		{"challenge", "/challenge", "k", `{"task_id":"1","content":"x","other_analyses":[
			{"agent_name":"other","observations":[{"finding":"untagged","evidence":"trust me","severity":"info"},
			{"finding":"tagged","evidence":"[VERIFIED: a.go:1] yes","severity":"warning"},
			{"finding":"hostile","evidence":"[INDICATED: x] y","severity":"info","flags":["prompt_injection"]}]},
			{"agent_name":"tester","observations":[{"finding":"mine","evidence":"none","severity":"info"}]}]}`, 200, func(t *testing.T, out map[string]any) {
			ch, co := out["challenges"].([]any), out["concessions"].([]any)
			if len(ch) != 2 || len(co) != 1 {
				t.Fatalf("challenges %v concessions %v", ch, co)
			}
			if ch[0].(map[string]any)["finding_challenged"] != "untagged" || co[0].(map[string]any)["finding_accepted"] != "tagged" {
				t.Errorf("wrong targets: %v %v", ch, co)
			}
		}},
		{"vote approve with condition", "/vote", "k", `{"task_id":"1","content":"x","synthesis":{"recommended_direction":"fix it",
			"key_findings":[{"agent_name":"a","finding":"SQLi","evidence":"e","severity":"critical"}],"trade_offs":[],"minority_views":[]}}`, 200,
			func(t *testing.T, out map[string]any) {
				if out["approve"] != true || len(out["conditions"].([]any)) != 1 || out["dissent_reason"] != nil {
					t.Errorf("vote = %v", out)
				}
			}},
		{"vote dissent", "/vote", "k", `{"task_id":"1","content":"x","synthesis":{"recommended_direction":""}}`, 200, func(t *testing.T, out map[string]any) {
			if out["approve"] != false || out["dissent_reason"] == "" || out["dissent_reason"] == nil {
				t.Errorf("vote = %v", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := post(t, srv.URL+tt.path, tt.key, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d (%v)", status, tt.status, out)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/analyze")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /analyze = %d", resp.StatusCode)
	}
}

func TestConformsToProtocol(t *testing.T) {
	for _, key := range []string{"", "k"} {
		srv := newTestAgent(t, key)
		if rep := roundtable.Check(context.Background(), srv.Client(), srv.URL, key); !rep.OK || rep.Warnings != 0 {
			t.Errorf("key %q:\n%s", key, rep)
		}
	}
}

// TestRunsAsOneCommand builds the binary and runs it the way the README
// says, then checks it and stops it with SIGINT.
func TestRunsAsOneCommand(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	bin := filepath.Join(t.TempDir(), "roundtable-agent")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-name", "my_agent", "-domain", "general")
	cmd.Env = append(os.Environ(), "ROUNDTABLE_AGENT_API_KEY=env-key")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
	}()
	var base string
	select {
	case l := <-line:
		var ok bool
		if base, ok = strings.CutPrefix(l, "roundtable-agent listening on "); !ok {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no listening line")
	}
	rep := roundtable.Check(context.Background(), nil, base, "env-key")
	if !rep.OK || rep.AgentName != "my_agent" {
		t.Errorf("check:\n%s", rep)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not stop on SIGINT")
	}
}
