package app

import (
	"context"
	"net/http"
	"path/filepath"

	"jarvis/api"
	"jarvis/app/mcp"
	"jarvis/internal/approved"
)

// StartMCP starts the MCP servers of o.ConfigPath with their state
// (mcp-state.json) and the user's approvals in dataDir, and keeps the
// service at base told of their tools until ctx ends. A configuration
// error is logged and shown in the MCP panel; Jarvis runs without those
// servers.
func StartMCP(ctx context.Context, o mcp.Options, dataDir, base, token string) (*mcp.Manager, error) {
	ok, err := approved.Open(dataDir)
	if err != nil {
		return nil, err
	}
	o.StatePath, o.Approved = filepath.Join(dataDir, "mcp-state.json"), ok
	m, err := mcp.New(o)
	if err != nil {
		return nil, err
	}
	if err := m.Start(); err != nil {
		o.Logger.Error("mcp: the config was not applied", "err", err)
	}
	go SyncMCPCatalog(ctx, api.NewClient(base, token, &http.Client{}), m, o.Logger, 0)
	return m, nil
}
