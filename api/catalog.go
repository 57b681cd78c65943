package api

import (
	"context"
	"encoding/json"
	"net/http"
)

// CatalogTool is one tool the desktop runs on the service's behalf beyond
// the OS tools: today the tools of MCP servers, named
// mcp__<server>__<tool>.
type CatalogTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON schema of the arguments object
	// Capabilities scope the tool like an OS tool's (e.g. "mcp.github").
	Capabilities []string `json:"capabilities,omitempty"`
}

// ToolCatalog is the body of PUT /v1/tools/catalog and of GET's answer:
// the whole catalogue, which replaces the previous one.
type ToolCatalog struct {
	Tools []CatalogTool `json:"tools"`
}

// ToolCatalogResponse answers PUT /v1/tools/catalog.
type ToolCatalogResponse struct {
	Count int `json:"count"`
}

// PutToolCatalog calls PUT /v1/tools/catalog.
func (c *Client) PutToolCatalog(ctx context.Context, cat ToolCatalog) (ToolCatalogResponse, error) {
	var out ToolCatalogResponse
	return out, c.Do(ctx, http.MethodPut, "/v1/tools/catalog", cat, &out)
}
