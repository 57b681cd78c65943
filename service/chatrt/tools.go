package chatrt

import (
	"context"
	"encoding/json"
	"sort"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/prompt"
	"jarvis/service/turn"
	"jarvis/tools"
)

func (rt *Runtime) toolAllowed(a config.Agent, name string) bool {
	def, ok := rt.desktopTool(name)
	return ok && prompt.ToolInScope(a, name, def.Capabilities)
}

// ServerTool is a tool the service executes itself (memory, delegation, round
// table). It is scoped like any other tool. A call that stays in the process
// (memory, a message to an in-process chat agent) runs at once and its
// tool.result (source "service", with name and arguments) is what the
// desktop records in its audit log; a call that sends data out of the
// process (outbound reports so, and where to) first goes to the desktop as a
// tool.request with source "service", and runs only if the gate allows it.
type ServerTool struct {
	Spec         llm.ToolSpec
	Capabilities []string
	Run          func(ctx context.Context, t *turn.Turn, agent config.Agent, args json.RawMessage) (string, error)
	// Outbound reports whether a call sends data out of the process, and a
	// description of where for the permission prompt. Nil: never.
	Outbound func(c *config.Config, caller config.Agent, args json.RawMessage) (target string, ok bool)
}

// RegisterTool adds a service-executed tool.
func (rt *Runtime) RegisterTool(st ServerTool) {
	st.Spec.Parameters = withReason(st.Spec.Parameters)
	rt.serverTools[st.Spec.Name] = st
}

// reasonProperty is added to every offered tool's schema: the model says why
// it needs the action, and the desktop shows it in the permission prompt.
const reasonProperty = `{"type":"string","description":"One short sentence telling the user why this action is needed."}`

// offeredTools returns every tool as offered to models (with the reason
// property). Computed once: schemas do not change while the service runs.
func offeredTools() []scopedSpec {
	var out []scopedSpec
	for _, d := range tools.Definitions() {
		out = append(out, scopedSpec{ToolSpec: llm.ToolSpec{Name: d.Name, Description: d.Description, Parameters: withReason(d.Parameters)}, Capabilities: d.Capabilities})
	}
	return out
}

type scopedSpec struct {
	llm.ToolSpec
	Capabilities []string
}

// toolSpecs returns the tools offered to an agent's model: the OS tools, then
// the service's own, in a stable order.
func (rt *Runtime) toolSpecs(a config.Agent) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, t := range rt.tools {
		if prompt.ToolInScope(a, t.Name, t.Capabilities) {
			out = append(out, t.ToolSpec)
		}
	}
	out = append(out, rt.catalogSpecs(a)...) // the desktop's MCP tools
	names := make([]string, 0, len(rt.serverTools))
	for n := range rt.serverTools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st := rt.serverTools[n]
		if prompt.ToolInScope(a, n, st.Capabilities) {
			out = append(out, st.Spec)
		}
	}
	return out
}

// ToolNames are the names of the tools a's model is offered (a task's tools
// are chosen among them).
func (rt *Runtime) ToolNames(a config.Agent) []string {
	specs := rt.toolSpecs(a)
	out := make([]string, 0, len(specs))
	for _, sp := range specs {
		out = append(out, sp.Name)
	}
	return out
}

func withReason(schema json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return schema
	}
	props := map[string]json.RawMessage{}
	if p, ok := m["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return schema // properties that are not an object: left as they are
		}
	}
	props["reason"] = json.RawMessage(reasonProperty)
	pb, err := json.Marshal(props)
	if err != nil {
		return schema
	}
	m["properties"] = pb
	b, err := json.Marshal(m)
	if err != nil {
		return schema
	}
	return b
}

// The system prompt of a chat run is built in prompt.go.
