package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"jarvis/api"

	"jarvis/app/mcp"
	"jarvis/tools"
)

// The MCP tools in the Runner: the gate judges an mcp__<server>__<tool>
// call like an OS tool (mcp.Manager.Definition and Assess: risky by
// default, schema-checked canonical arguments, destructiveHint raises),
// and the Manager runs it.

// mcpAssessor sends MCP names to the Manager, every other to the executor.
type mcpAssessor struct {
	x *tools.Executor
	m *mcp.Manager
}

func (a mcpAssessor) Assess(name string, args json.RawMessage) tools.Assessment {
	if name == mcp.SamplingTool { // a server's request for a completion (mcpsampling.go)
		return mcp.AssessSampling(args)
	}
	if mcp.IsToolName(name) {
		return a.m.Assess(name, args)
	}
	return a.x.Assess(name, args)
}

// mcpDefinition is the gate's lookup of MCP names: the servers' tools, and
// their requests for a completion.
func mcpDefinition(m *mcp.Manager) func(string) (tools.Definition, bool) {
	return func(name string) (tools.Definition, bool) {
		if name == mcp.SamplingTool {
			return mcp.SamplingDefinition(), true
		}
		return m.Definition(name)
	}
}

// exec is the gate's ExecFunc for one call: MCP tools through the
// Manager (with the call's progress; its images and audio go into media),
// the rest through the executor, checkpointed first when they change files
// (undo.go).
func (r *Runner) exec(sessionID string, call api.ToolCall, media *mcp.MediaSink) func(ctx context.Context, name string, args json.RawMessage) (string, error) {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		if r.mcp == nil || !mcp.IsToolName(name) {
			if name == "run_command" && r.cmdProg != nil {
				ctx = tools.WithProgress(ctx, commandProgress(call.ID, func(p CommandProgress) { r.cmdProg(sessionID, p) }))
			}
			return r.checkpointed(sessionID, call)(ctx, name, args)
		}
		var progress func(mcp.Progress)
		if r.mcpProg != nil {
			progress = func(p mcp.Progress) { r.mcpProg(sessionID, p) }
		}
		return r.mcp.Call(mcp.WithSession(mcp.WithMedia(ctx, media), sessionID), call.ID, name, args, progress)
	}
}

// EventCommandProgress is the window event of a running command's output
// (CommandProgress): the window shows it on the call's card.
const EventCommandProgress = "command:progress"

// CommandProgress is a running run_command's output so far: its call, the
// bytes of output (stdout and stderr) and the last line. A command's output
// is not an MCP server's progress (no total, no server, no token), so it
// has its own event.
type CommandProgress struct {
	Call  string `json:"call"`
	Bytes int    `json:"bytes"`
	Line  string `json:"line,omitempty"`
}

// commandProgress turns run_command's output, as it arrives, into
// CommandProgress notices (the window shows them while the call runs): at
// most four a second, so a long `npm install` shows it is moving.
func commandProgress(callID string, emit func(CommandProgress)) func(string) {
	var mu sync.Mutex
	var total int
	var last time.Time
	var line string
	return func(chunk string) {
		mu.Lock()
		defer mu.Unlock()
		total += len(chunk)
		if t := strings.TrimRight(chunk, "\n"); t != "" {
			line = t[strings.LastIndexByte(t, '\n')+1:]
		}
		if time.Since(last) < 250*time.Millisecond {
			return
		}
		last = time.Now()
		if len(line) > 200 {
			line = line[:200] + "…"
		}
		emit(CommandProgress{Call: callID, Bytes: total, Line: line})
	}
}
