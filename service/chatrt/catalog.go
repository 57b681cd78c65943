package chatrt

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/catalog"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/llm"
	"jarvis/service/prompt"
	"jarvis/service/turn"
	"jarvis/tools"
)

// The hooks of package catalog (the tools the desktop announces: its MCP
// servers' tools) in the service: the routes, the tools offered to a model,
// and the lookup of a tool the desktop executes.

// handlePutToolCatalog is PUT /v1/tools/catalog: the desktop's whole
// catalogue replaces the previous one.
func (rt *Runtime) handlePutToolCatalog(w http.ResponseWriter, r *http.Request) error {
	var req api.ToolCatalog
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	n, err := rt.opts.Catalog.Set(req)
	if err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_tool_catalog", "the tool catalogue was not applied: %v", err)
	}
	rt.env.Log.Info("tool catalogue replaced", "tools", n)
	return httpapi.WriteJSON(w, http.StatusOK, api.ToolCatalogResponse{Count: n})
}

// handleGetToolCatalog is GET /v1/tools/catalog.
func (rt *Runtime) handleGetToolCatalog(w http.ResponseWriter, r *http.Request) error {
	return httpapi.WriteJSON(w, http.StatusOK, rt.opts.Catalog.Wire())
}

// desktopTool finds a tool the desktop executes: an OS tool, then a
// catalogue tool.
func (rt *Runtime) desktopTool(name string) (tools.Definition, bool) {
	if d, ok := tools.Lookup(name); ok {
		return d, true
	}
	return rt.opts.Catalog.Lookup(name)
}

// catalogSpecs are the catalogue's tools in a's scope, as offered to its
// model (with the reason property).
func (rt *Runtime) catalogSpecs(a config.Agent) []llm.ToolSpec {
	if rt.deferCatalog(a) {
		return []llm.ToolSpec{rt.searchTool().Spec}
	}
	var out []llm.ToolSpec
	for _, d := range rt.opts.Catalog.Definitions() {
		if prompt.ToolInScope(a, d.Name, d.Capabilities) {
			out = append(out, llm.ToolSpec{Name: d.Name, Description: d.Description, Parameters: withReason(d.Parameters)})
		}
	}
	return out
}

// deferCatalog reports whether a's model is offered catalog.SearchTool
// instead of the catalogue's tools: their definitions would take more than
// catalog.DeferShare percent of its context window.
func (rt *Runtime) deferCatalog(a config.Agent) bool {
	n := rt.opts.Catalog.Bytes()
	if n == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return n/bytesPerToken > rt.budgetFor(ctx, a).window*catalog.DeferShare/100
}

// withLoaded adds to a model step's tools the catalogue tools the session's
// model found with catalog.SearchTool (in a's scope, not offered yet).
func (rt *Runtime) withLoaded(sessionID string, a config.Agent, specs []llm.ToolSpec) []llm.ToolSpec {
	names := rt.opts.Catalog.Loaded.Names(sessionID)
	if len(names) == 0 {
		return specs
	}
	have := make(map[string]bool, len(specs))
	for _, sp := range specs {
		have[sp.Name] = true
	}
	out := specs
	for _, n := range names {
		if d, ok := rt.opts.Catalog.Lookup(n); ok && !have[n] && prompt.ToolInScope(a, n, d.Capabilities) {
			if len(out) == len(specs) {
				out = append([]llm.ToolSpec(nil), specs...)
			}
			out = append(out, llm.ToolSpec{Name: n, Description: d.Description, Parameters: withReason(d.Parameters)})
		}
	}
	return out
}

// serverToolFor finds a tool the service runs: a registered one, or
// catalog.SearchTool while there is a catalogue.
func (rt *Runtime) serverToolFor(name string) (ServerTool, bool) {
	if st, ok := rt.serverTools[name]; ok {
		return st, true
	}
	if name == catalog.SearchTool && rt.opts.Catalog.Bytes() > 0 {
		return rt.searchTool(), true
	}
	return ServerTool{}, false
}

// searchTool is catalog.SearchTool: it finds catalogue tools in the
// agent's scope and makes them available in the session from the next
// model step on.
func (rt *Runtime) searchTool() ServerTool {
	return ServerTool{
		Spec: llm.ToolSpec{Name: catalog.SearchTool, Description: catalog.SearchDescription, Parameters: withReason(json.RawMessage(catalog.SearchSchema))},
		Run: func(ctx context.Context, t *turn.Turn, agent config.Agent, args json.RawMessage) (string, error) {
			var in struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
				return "", errors.New("give query: words describing the tool you need")
			}
			found := rt.opts.Catalog.Search(in.Query, func(d tools.Definition) bool { return prompt.ToolInScope(agent, d.Name, d.Capabilities) })
			type entry struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			}
			out := struct {
				Tools []entry `json:"tools"`
				Note  string  `json:"note"`
			}{Tools: []entry{}, Note: "No tool matched; try other words."}
			for _, d := range found {
				out.Tools = append(out.Tools, entry{d.Name, d.Description, d.Parameters})
				rt.opts.Catalog.Loaded.Add(t.SessionID, d.Name)
			}
			if len(found) > 0 {
				out.Note = "These tools are now available: call them by name."
			}
			b, err := json.Marshal(out)
			return string(b), err
		},
	}
}
