package roundtable

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentBinary is the example agent built once per test binary run.
var agentBinary struct {
	once sync.Once
	path string
	err  error
}

// buildAgent compiles examples/roundtable-agent with the go command.
func buildAgent(t *testing.T) string {
	t.Helper()
	agentBinary.once.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			agentBinary.err = err
			return
		}
		dir, err := os.MkdirTemp("", "roundtable-agent-*")
		if err != nil {
			agentBinary.err = err
			return
		}
		agentBinary.path = filepath.Join(dir, "roundtable-agent")
		out, err := exec.Command(goCmd, "build", "-o", agentBinary.path, "jarvis/examples/roundtable-agent").CombinedOutput()
		if err != nil {
			agentBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if agentBinary.err != nil {
		t.Fatalf("building the example agent: %v", agentBinary.err)
	}
	return agentBinary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if agentBinary.path != "" {
		os.RemoveAll(filepath.Dir(agentBinary.path))
	}
	os.Exit(code)
}

// startAgent runs the example agent as a real subprocess on a free port and
// returns its base URL; it is stopped with SIGINT when the test ends.
func startAgent(t *testing.T, args ...string) string {
	t.Helper()
	bin := buildAgent(t)
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		const prefix = "roundtable-agent listening on "
		if !ok || !strings.HasPrefix(line, prefix) {
			t.Fatalf("unexpected first line from agent: %q", line)
		}
		return strings.TrimPrefix(line, prefix)
	case <-time.After(20 * time.Second):
		t.Fatal("agent did not start")
	}
	return ""
}

// scripted is a scripted external agent: it answers each endpoint with the
// given handler and records the Authorization headers it saw.
type scripted struct {
	mu    sync.Mutex
	auths []string
	calls map[string]int
}

func newScripted(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body []byte)) (*httptest.Server, *scripted) {
	t.Helper()
	s := &scripted{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.calls[r.URL.Path]++
		s.mu.Unlock()
		h(w, r, body)
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func (s *scripted) snapshot() ([]string, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := map[string]int{}
	for k, v := range s.calls {
		c[k] = v
	}
	return append([]string(nil), s.auths...), c
}

// protocolHandler answers the three endpoints with well-formed bodies built
// from the given analysis; challenge and vote are generic.
func protocolHandler(name string, analysis map[string]any) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			_ = json.NewEncoder(w).Encode(analysis)
		case "/challenge":
			_ = json.NewEncoder(w).Encode(map[string]any{"agent_name": name, "challenges": []any{}, "concessions": []any{}})
		case "/vote":
			_ = json.NewEncoder(w).Encode(map[string]any{"agent_name": name, "approve": true, "conditions": []string{"ship it carefully"}})
		default:
			http.NotFound(w, r)
		}
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func exclusionsOf(res Result, agent string) map[Phase]Exclusion {
	out := map[Phase]Exclusion{}
	for _, x := range res.Exclusions {
		if x.Agent == agent {
			out[x.Phase] = x
		}
	}
	return out
}
