package service

// The hooks of package catalog (the tools the desktop announces: its MCP
// servers' tools) in the service: the routes, the tools offered to a model,
// and the lookup of a tool the desktop executes.

import (
	"net/http"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/tools"
)

// handlePutToolCatalog is PUT /v1/tools/catalog: the desktop's whole
// catalogue replaces the previous one.
func (s *Service) handlePutToolCatalog(w http.ResponseWriter, r *http.Request) error {
	var req api.ToolCatalog
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	n, err := s.catalog.Set(req)
	if err != nil {
		return errorf(http.StatusBadRequest, "invalid_tool_catalog", "the tool catalogue was not applied: %v", err)
	}
	s.log.Info("tool catalogue replaced", "tools", n)
	return writeJSON(w, http.StatusOK, api.ToolCatalogResponse{Count: n})
}

// handleGetToolCatalog is GET /v1/tools/catalog.
func (s *Service) handleGetToolCatalog(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, s.catalog.Wire())
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
	var out []llm.ToolSpec
	for _, d := range s.catalog.Definitions() {
		if toolInScope(a, d.Name, d.Capabilities) {
			out = append(out, llm.ToolSpec{Name: d.Name, Description: d.Description, Parameters: withReason(d.Parameters)})
		}
	}
	return out
}
