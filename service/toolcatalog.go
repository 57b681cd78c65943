package service

// The hooks of package catalog (the tools the desktop announces: its MCP
// servers' tools) in the service: the routes, the tools offered to a model,
// and the lookup of a tool the desktop executes.

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

// handlePutToolCatalog is PUT /v1/tools/catalog: the desktop's whole
// catalogue replaces the previous one.
func (s *Service) handlePutToolCatalog(w http.ResponseWriter, r *http.Request) error {
	var req api.ToolCatalog
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	n, err := s.catalog.Set(req)
	if err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_tool_catalog", "the tool catalogue was not applied: %v", err)
	}
	s.log.Info("tool catalogue replaced", "tools", n)
	return httpapi.WriteJSON(w, http.StatusOK, api.ToolCatalogResponse{Count: n})
}

// handleGetToolCatalog is GET /v1/tools/catalog.
func (s *Service) handleGetToolCatalog(w http.ResponseWriter, r *http.Request) error {
	return httpapi.WriteJSON(w, http.StatusOK, s.catalog.Wire())
}

// desktopTool finds a tool the desktop executes: an OS tool, then a
// catalogue tool.
func (s *Service) desktopTool(name string) (tools.Definition, bool) {
	if d, ok := tools.Lookup(name); ok {
		return d, true
	}
	return s.catalog.Lookup(name)
}

// catalogSpecs are the catalogue's tools in a's scope, as offered to its
// model (with the reason property).
func (s *Service) catalogSpecs(a config.Agent) []llm.ToolSpec {
	if s.deferCatalog(a) {
		return []llm.ToolSpec{s.searchTool().spec}
	}
	var out []llm.ToolSpec
	for _, d := range s.catalog.Definitions() {
		if prompt.ToolInScope(a, d.Name, d.Capabilities) {
			out = append(out, llm.ToolSpec{Name: d.Name, Description: d.Description, Parameters: withReason(d.Parameters)})
		}
	}
	return out
}

// deferCatalog reports whether a's model is offered catalog.SearchTool
// instead of the catalogue's tools: their definitions would take more than
// catalog.DeferShare percent of its context window.
func (s *Service) deferCatalog(a config.Agent) bool {
	n := s.catalog.Bytes()
	if n == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return n/bytesPerToken > s.budgetFor(ctx, a).window*catalog.DeferShare/100
}

// withLoaded adds to a model step's tools the catalogue tools the session's
// model found with catalog.SearchTool (in a's scope, not offered yet).
func (s *Service) withLoaded(sessionID string, a config.Agent, specs []llm.ToolSpec) []llm.ToolSpec {
	names := s.catalog.Loaded.Names(sessionID)
	if len(names) == 0 {
		return specs
	}
	have := make(map[string]bool, len(specs))
	for _, sp := range specs {
		have[sp.Name] = true
	}
	out := specs
	for _, n := range names {
		if d, ok := s.catalog.Lookup(n); ok && !have[n] && prompt.ToolInScope(a, n, d.Capabilities) {
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
func (s *Service) serverToolFor(name string) (serverTool, bool) {
	if st, ok := s.serverTools[name]; ok {
		return st, true
	}
	if name == catalog.SearchTool && s.catalog.Bytes() > 0 {
		return s.searchTool(), true
	}
	return serverTool{}, false
}

// searchTool is catalog.SearchTool: it finds catalogue tools in the
// agent's scope and makes them available in the session from the next
// model step on.
func (s *Service) searchTool() serverTool {
	return serverTool{
		spec: llm.ToolSpec{Name: catalog.SearchTool, Description: catalog.SearchDescription, Parameters: withReason(json.RawMessage(catalog.SearchSchema))},
		run: func(ctx context.Context, t *turn.Turn, agent config.Agent, args json.RawMessage) (string, error) {
			var in struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
				return "", errors.New("give query: words describing the tool you need")
			}
			found := s.catalog.Search(in.Query, func(d tools.Definition) bool { return prompt.ToolInScope(agent, d.Name, d.Capabilities) })
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
				s.catalog.Loaded.Add(t.SessionID, d.Name)
			}
			if len(found) > 0 {
				out.Note = "These tools are now available: call them by name."
			}
			b, err := json.Marshal(out)
			return string(b), err
		},
	}
}
