package app

import (
	"context"
	"encoding/json"

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
// Manager (with the call's progress), the rest through the executor.
func (r *Runner) exec(sessionID, callID string) func(ctx context.Context, name string, args json.RawMessage) (string, error) {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		if r.mcp == nil || !mcp.IsToolName(name) {
			return r.x.Execute(ctx, name, args)
		}
		var progress func(mcp.Progress)
		if r.mcpProg != nil {
			progress = func(p mcp.Progress) { r.mcpProg(sessionID, p) }
		}
		return r.mcp.Call(ctx, callID, name, args, progress)
	}
}
