package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/mcp"
	"jarvis/internal/testwait"
)

// researchTool is server-everything's tool whose execution.taskSupport is
// "required" (MCP tasks).
const researchTool = "mcp__every__simulate-research-query"

// progressLog keeps the progress the runner reports for MCP calls.
type progressLog struct {
	mu  sync.Mutex
	all []mcp.Progress
}

func (p *progressLog) add(_ string, pr mcp.Progress) {
	p.mu.Lock()
	p.all = append(p.all, pr)
	p.mu.Unlock()
}

// messages are the progress messages of the call callID, in order.
func (p *progressLog) messages(callID string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pr := range p.all {
		if pr.Call == callID {
			out = append(out, pr.Message)
		}
	}
	return out
}

// taskDesktop is the desktop with server-everything, its research tool
// allowed, once that tool is in the service's catalogue.
func taskDesktop(t *testing.T) (*realDesktop, *progressLog, *syncWriter) {
	t.Helper()
	prog := &progressLog{}
	logs := &syncWriter{}
	d := everythingDesktopWith(t, `{"rules":[{"tool":"`+researchTool+`","action":"allow"}]}`,
		mcp.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		func(o *ToolRunnerOptions) { o.MCPProgress = prog.add })
	testwait.Until(t, "the research tool in the service's catalogue", 30*time.Second, func() bool {
		var cat api.ToolCatalog
		if err := d.c.Do(context.Background(), http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
			return false
		}
		for _, tl := range cat.Tools {
			if tl.Name == researchTool {
				return true
			}
		}
		return false
	})
	return d, prog, logs
}

// TestMCPTaskToolRunsAsTask: server-everything's simulate-research-query
// requires a task. Called by the model through the real desktop runner, it
// runs as one: its stages reach the call as progress, and its report (the
// task's result) reaches the model.
func TestMCPTaskToolRunsAsTask(t *testing.T) {
	d, prog, logs := taskDesktop(t)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool `+researchTool+` {"topic":"tides"}]]`); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "Research Report: tides")
	e := d.auditRow(t, sid, researchTool)
	if !strings.Contains(e.Result, "Stage 4: Generating report") {
		t.Fatalf("audit row's result %q", e.Result)
	}
	got := strings.Join(prog.messages(e.ToolCallID), " | ")
	for _, stage := range []string{"Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."} {
		if !strings.Contains(got, stage) {
			t.Fatalf("progress %q lacks %q", got, stage)
		}
	}
	if !strings.Contains(logs.String(), "tool call runs as a task") {
		t.Fatalf("log %s", logs.String())
	}
}

// TestMCPTaskToolStopCancelsTask: the user's Stop while the research task
// runs cancels the task at the server (tasks/cancel, which answers with
// the task cancelled); no report reaches the model.
func TestMCPTaskToolStopCancelsTask(t *testing.T) {
	d, prog, logs := taskDesktop(t)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool `+researchTool+` {"topic":"dunes"}]]`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the task's first stage as progress", 20*time.Second, func() bool {
		prog.mu.Lock()
		defer prog.mu.Unlock()
		return len(prog.all) > 0
	})
	if _, err := d.app.Cancel(sid); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the server's answer to tasks/cancel", 20*time.Second, func() bool {
		return strings.Contains(logs.String(), "task cancelled")
	})
	if l := logs.String(); !strings.Contains(l, "status=cancelled") {
		t.Fatalf("log %s", l)
	}
	if e := d.auditRow(t, sid, researchTool); strings.Contains(e.Result, "Research Report") {
		t.Fatalf("the stopped call's audit row has the report: %+v", e)
	}
}
