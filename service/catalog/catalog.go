// Package catalog owns the tools the desktop announces beyond the OS tools
// (the tools of its MCP servers, mcp__<server>__<tool>): the catalogue
// PUT /v1/tools/catalog replaces, which the chat runtime offers to models
// (scoped by the agents' allow/deny lists like every tool) and whose calls
// it sends to the desktop as tool.request. The service never runs them.
package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"jarvis/api"
	"jarvis/tools"
)

// Limits of one catalogue: a desktop cannot make every model request
// carry an unbounded list.
const (
	MaxTools       = 512
	MaxDescription = 8 << 10
	MaxSchema      = 64 << 10
)

// name: the prefix, a server, "__", a tool; within a model's 64 characters.
var name = regexp.MustCompile(`^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$`)

// Catalog is the current catalogue. Safe for concurrent use.
type Catalog struct {
	mu    sync.RWMutex
	tools []tools.Definition // sorted by name
	index map[string]int
	bytes int
	// Loaded are the tools found with SearchTool, per session.
	Loaded Loaded
}

// New returns an empty catalogue.
func New() *Catalog { return &Catalog{index: map[string]int{}} }

// Set validates c and replaces the catalogue with it. On error nothing
// changes; the error names the offending tool and says what is wrong.
func (c *Catalog) Set(cat api.ToolCatalog) (int, error) {
	if len(cat.Tools) > MaxTools {
		return 0, fmt.Errorf("tools: %d tools, at most %d", len(cat.Tools), MaxTools)
	}
	defs := make([]tools.Definition, 0, len(cat.Tools))
	index := make(map[string]int, len(cat.Tools))
	seen := map[string]bool{}
	for i, t := range cat.Tools {
		where := fmt.Sprintf("tools[%d]", i)
		switch {
		case len(t.Name) > 64 || !name.MatchString(t.Name):
			return 0, fmt.Errorf("%s.name %q: must be mcp__<server>__<tool> with letters, digits, '-' and '_', at most 64 characters", where, t.Name)
		case seen[t.Name]:
			return 0, fmt.Errorf("%s.name %q: listed twice", where, t.Name)
		case len(t.Description) > MaxDescription:
			return 0, fmt.Errorf("%s.description: over %d bytes", where, MaxDescription)
		case len(t.Parameters) > MaxSchema:
			return 0, fmt.Errorf("%s.parameters: over %d bytes", where, MaxSchema)
		}
		seen[t.Name] = true
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(params, &obj); err != nil {
			return 0, fmt.Errorf("%s.parameters: not a JSON schema object", where)
		}
		if typ, ok := obj["type"]; ok && strings.TrimSpace(string(typ)) != `"object"` {
			return 0, fmt.Errorf("%s.parameters: the schema's type must be \"object\"", where)
		}
		defs = append(defs, tools.Definition{Name: t.Name, Description: t.Description, Parameters: params,
			Risk: tools.Risky, Capabilities: t.Capabilities})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	size := 0
	for i, d := range defs {
		index[d.Name] = i
		size += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	c.mu.Lock()
	c.tools, c.index, c.bytes = defs, index, size
	c.mu.Unlock()
	return len(defs), nil
}

// Lookup returns the definition of a catalogue tool.
func (c *Catalog) Lookup(name string) (tools.Definition, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[name]
	if !ok {
		return tools.Definition{}, false
	}
	return c.tools[i], true
}

// Definitions returns the catalogue, sorted by name.
func (c *Catalog) Definitions() []tools.Definition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tools // replaced, never modified in place
}

// Wire returns the catalogue in its wire form (GET /v1/tools/catalog).
func (c *Catalog) Wire() api.ToolCatalog {
	out := api.ToolCatalog{Tools: []api.CatalogTool{}}
	for _, d := range c.Definitions() {
		out.Tools = append(out.Tools, api.CatalogTool{Name: d.Name, Description: d.Description, Parameters: d.Parameters, Capabilities: d.Capabilities})
	}
	return out
}
