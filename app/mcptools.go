package app

import (
	"context"
	"encoding/json"
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
	if mcp.IsToolName(name) {
		return a.m.Assess(name, args)
	}
	return a.x.Assess(name, args)
}

// exec is the gate's ExecFunc for one call: MCP tools through the
// Manager (with the call's progress), the rest through the executor,
// checkpointed first when they change files (undo.go).
func (r *Runner) exec(sessionID string, call api.ToolCall) func(ctx context.Context, name string, args json.RawMessage) (string, error) {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		if r.mcp == nil || !mcp.IsToolName(name) {
			return r.checkpointed(sessionID, call)(ctx, name, args)
		}
		var progress func(mcp.Progress)
		if r.mcpProg != nil {
			progress = func(p mcp.Progress) { r.mcpProg(sessionID, p) }
		}
		return r.mcp.Call(ctx, call.ID, name, args, progress)
	}
}
