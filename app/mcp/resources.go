package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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

// Resource is one resource, or resource template, a server lists
// (resources/list, resources/templates/list): the MCP panel shows them and
// the user attaches one to a message.
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri,omitempty"`         // a resource
	URITemplate string `json:"uriTemplate,omitempty"` // a template (RFC 6570): the user fills it in
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// maxListedResources caps what one server's listing shows (a server may
// list thousands of files).
const maxListedResources = 200

// Resources lists the resources and templates of every ready server that
// offers resources, asked each time; at most maxListedResources per
// server. A server that fails to answer is left out and logged.
func (m *Manager) Resources(ctx context.Context) []Resource {
	servers := m.serverList()
	var out []Resource
	for _, s := range servers {
		cs := s.current()
		if cs == nil || !offersResources(cs) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
		n := 0
		for r, err := range cs.Resources(cctx, nil) {
			if err != nil {
				m.log.Warn("mcp: listing the server's resources failed", "server", s.cfg.Name, "err", err)
				break
			}
			out = append(out, Resource{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
			if n++; n == maxListedResources {
				break
			}
		}
		for r, err := range cs.ResourceTemplates(cctx, nil) {
			if err != nil {
				m.log.Warn("mcp: listing the server's resource templates failed", "server", s.cfg.Name, "err", err)
				break
			}
			out = append(out, Resource{Server: s.cfg.Name, URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
		cancel()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// ReadResource reads a server's resource for the user to attach to a
// message: its text as the model would read it (blobs named, not shown).
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	s, cs, err := m.ready(server)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	args, _ := json.Marshal(map[string]string{"uri": uri})
	out, err := m.readResource(cctx, cs, args)
	if err != nil {
		return "", fmt.Errorf("resource %s of MCP server %q: %w", uri, server, err)
	}
	return out, nil
}
