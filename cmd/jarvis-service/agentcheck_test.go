package main

import (
	"errors"
	"io"
	"jarvis/internal/proc"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// startExampleAgent builds and runs examples/roundtable-agent.
func startExampleAgent(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := proc.Build(t.TempDir(), "jarvis/examples/roundtable-agent")
	if err != nil {
		t.Fatal(err)
	}
	p, err := proc.Start(bin, append([]string{"-addr", "127.0.0.1:0", "-name", "my_agent", "-domain", "general"}, args...), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p.URL
}

// agentCheckRun runs the real binary's agent-check and returns its exit
// code and output.
func agentCheckRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"agent-check"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

func TestAgentCheck(t *testing.T) {
	url := startExampleAgent(t)
	keyedURL := startExampleAgent(t, "-api-key", "k-42")
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			io.WriteString(w, `{"agent_name":"broken","observations":[{"finding":"x","severity":"catastrophic"}]}`)
		case "/vote":
			io.WriteString(w, `{"agent_name":"broken","approve":"yes"}`)
		default:
			http.Error(w, "nope", http.StatusInternalServerError)
		}
	}))
	defer broken.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"example agent conforms", []string{url}, 0, []string{"PASS", "/analyze", "/challenge", "/vote", "my_agent"}},
		{"flags after or before the URL", []string{"--api-key", "k-42", keyedURL}, 0, []string{"PASS"}},
		{"missing key", []string{keyedURL}, 1, []string{"FAIL", "401"}},
		{"broken agent", []string{broken.URL}, 1, []string{"FAIL", "domain", "severity", "approve", "500"}},
		{"json report", []string{url, "--json"}, 0, []string{`"ok": true`}},
		{"link-local refused", []string{"http://169.254.169.254"}, 1, []string{"FAIL", "link-local"}},
		{"no URL", nil, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := agentCheckRun(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
