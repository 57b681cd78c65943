package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadResourceTool is the tool Jarvis adds for each server that offers
// resources: the model reads a resource by its URI (a resource link in one
// of the server's tool results, say) through the gate like any MCP tool.
// It is not offered when the server has a tool by that name.
const ReadResourceTool = "read_resource"

var readResourceSchema = json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI"}},"required":["uri"],"additionalProperties":false}`)

// resourceTool is the catalogue entry of server's ReadResourceTool.
func resourceTool(server string) *Tool {
	return &Tool{Name: ToolName(server, ReadResourceTool), Server: server, Tool: ReadResourceTool, Title: "Read a resource",
		Description: fmt.Sprintf("Read a resource of MCP server %q by its URI (for example a resource link in one of its tool results).", server),
		InputSchema: readResourceSchema, Hash: "jarvis:" + ReadResourceTool, resource: true}
}

// offersResources reports whether the session's server announced resources.
func offersResources(cs *sdk.ClientSession) bool {
	r := cs.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Resources != nil
}

// readResource reads uri from the server and renders it as the model reads
// a tool result: text as is, blobs summarized.
func (m *Manager) readResource(ctx context.Context, cs *sdk.ClientSession, args json.RawMessage) (string, error) {
	var in struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: in.URI})
	if err != nil {
		return "", err
	}
	var content []sdk.Content
	for _, c := range res.Contents {
		content = append(content, &sdk.EmbeddedResource{Resource: c})
	}
	if len(content) == 0 {
		return "[the resource is empty]", nil
	}
	return strings.TrimSpace(m.render(&sdk.CallToolResult{Content: content}, nil)), nil
}
