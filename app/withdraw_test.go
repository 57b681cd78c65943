package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

// realDesktop is the real service (httptest, scripted model) with the real
// App, Runner, gate, Prompter and audit log following it.
type realDesktop struct {
	c      *api.Client
	app    *App
	runner *Runner
	ws     string
	model  *testpeer.OpenAI // the scripted upstream
}

const realToken = "withdraw-token-0123456789abcdef"

func newRealDesktop(t *testing.T, toolTimeout int, policy string, moreAgents ...string) *realDesktop {
	t.Helper()
	return newRealDesktopWith(t, toolTimeout, policy, nil, moreAgents...)
}

// newRealDesktopWith is newRealDesktop with the runner's options adjusted
// by tweak (nil: none).
func newRealDesktopWith(t *testing.T, toolTimeout int, policy string, tweak func(*ToolRunnerOptions), moreAgents ...string) *realDesktop {
	t.Helper()
	model := testpeer.NewOpenAI()
	up := httptest.NewServer(model)
	t.Cleanup(up.Close)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws") // an agent's "{{WS}}" is the workspace's path
	cfg, err := config.Parse("withdraw.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"agents":[{"agentId":"general","displayName":"General"}%s],
		"toolResultTimeoutSeconds":%d}`, up.URL+"/v1", strings.ReplaceAll(agentsJSON(moreAgents), "{{WS}}", ws), toolTimeout)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: realToken, MCPBridge: testBridge(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	policyPath := filepath.Join(dir, "policy.json")
	if policy != "" {
		if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ro := ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: policyPath,
		Prompter: gate.PrompterOptions{Timeout: time.Minute}, Service: api.NewClient(srv.URL, realToken, &http.Client{})}
	if tweak != nil {
		tweak(&ro)
	}
	runner, err := NewToolRunner(ro)
	if err != nil {
		t.Fatal(err)
	}
	c := api.NewClient(srv.URL, realToken, &http.Client{})
	a, err := New(Options{Client: c, StreamClient: api.NewClient(srv.URL, realToken, NewStreamHTTPClient()),
		Emit: func(string, any) {}, Tools: runner, Prompts: runner.Prompts(), Audit: runner.Audit()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(a); runner.Close() })
	return &realDesktop{c: c, app: a, runner: runner, ws: ws, model: model}
}

// waitPrompt waits for the first pending prompt.
func (d *realDesktop) waitPrompt(t *testing.T) gate.Prompt {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		ch := d.runner.Prompts().Changed()
		if ps := d.runner.Prompts().Pending(); len(ps) > 0 {
			return ps[0]
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("no prompt")
		}
	}
}

// waitWithdrawn waits until the prompt is gone from the queue and the audit
// log has the call as withdrawn.
func (d *realDesktop) waitWithdrawn(t *testing.T, p gate.Prompt) audit.Entry {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		ch := d.runner.Prompts().Changed()
		gone := len(d.runner.Prompts().Pending()) == 0
		if gone {
			es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if e.ToolCallID == p.ToolCallID {
					return e
				}
			}
		}
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("prompt %s (call %s) was not withdrawn: pending %+v", p.ID, p.ToolCallID, d.runner.Prompts().Pending())
		}
	}
}

// TestPromptIsWithdrawnWhenTheServiceGivesUp: when the service stops
// waiting for a tool call (POST /v1/chat/cancel, or its tool-result
// timeout), the desktop withdraws the prompt; answering it afterwards runs
// nothing, and the audit records the call as withdrawn.
func TestPromptIsWithdrawnWhenTheServiceGivesUp(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			timeout := 300
			if how == "timeout" {
				timeout = 1
			}
			d := newRealDesktop(t, timeout, "")
			ctx := context.Background()
			s, err := d.app.NewSession("general")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.app.OpenSession(s.SessionID); err != nil {
				t.Fatal(err)
			}
			if err := d.app.Send(s.SessionID, `[[tool write_file {"path":"late.txt","content":"ran after all"}]]`); err != nil {
				t.Fatal(err)
			}
			p := d.waitPrompt(t)
			if how == "cancel" {
				if r, err := d.c.Cancel(ctx, s.SessionID); err != nil || !r.Cancelled {
					t.Fatalf("cancel: %+v %v", r, err)
				}
			}
			e := d.waitWithdrawn(t, p)
			if e.Decision != audit.Withdrawn || e.DecidedBy != audit.ByService {
				t.Fatalf("audit row %+v, want withdrawn by the service", e)
			}
			// The user answers the prompt they still had on screen.
			if err := d.app.ResolvePrompt(p.ID, "once", ""); !errors.Is(err, gate.ErrNoSuchPrompt) {
				t.Fatalf("answer after withdrawal: %v, want ErrNoSuchPrompt", err)
			}
			if _, err := os.Stat(filepath.Join(d.ws, "late.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the withdrawn call ran: %v", err)
			}
			es, _ := d.runner.Audit().List(ctx, audit.Filter{})
			for _, x := range es {
				if x.Decision == audit.Allowed {
					t.Fatalf("an allowed row for a withdrawn call: %+v", x)
				}
			}
		})
	}
}

// TestResultRefusedAfterTheCallRanIsAudited: a call the policy allows runs
// past the service's tool-result timeout; the withdrawal stops it, and the
// audit records both that it ran and that its result reached nobody.
func TestResultRefusedAfterTheCallRanIsAudited(t *testing.T) {
	d := newRealDesktop(t, 1, `{"rules":[{"tool":"run_command","args":{"program":"sleep"},"action":"allow"}]}`)
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := d.app.Send(s.SessionID, `[[tool run_command {"program":"sleep","args":["20"]}]]`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 2 {
			if es[0].Decision != audit.Allowed || es[1].Decision != audit.Withdrawn || es[1].DecidedBy != audit.ByService ||
				es[0].ToolCallID != es[1].ToolCallID {
				t.Fatalf("audit rows %+v", es)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit rows %+v, want the run and its withdrawal", es)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The withdrawal killed the program rather than letting it run its 20 s.
	if time.Since(start) > 15*time.Second {
		t.Fatal("the withdrawn command was not stopped")
	}
}

func agentsJSON(agents []string) string {
	out := ""
	for _, a := range agents {
		out += "," + a
	}
	return out
}
