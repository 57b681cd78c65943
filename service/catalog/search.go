package catalog

import (
	"sort"
	"strings"
	"sync"
	"unicode"

	"jarvis/tools"
)

// SearchTool is the tool offered instead of the catalogue's own when their
// definitions would take more than DeferShare percent of a model's
// context: the model finds tools by words and the ones found are offered
// from then on in that session.
const (
	SearchTool  = "mcp_tool_search"
	DeferShare  = 10
	searchLimit = 5
)

// SearchSchema is SearchTool's input schema.
const SearchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"Words describing the tool you need, e.g. \"github issues\" or \"read a file\""}},"required":["query"],"additionalProperties":false}`

// SearchDescription tells the model what the tool is for.
const SearchDescription = "Find tools of the connected MCP servers by words. The tools found are then available to call by name."

// Bytes is the size of the catalogue's definitions (names, descriptions,
// schemas): what offering all of them adds to every request.
func (c *Catalog) Bytes() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Search returns up to five tools that keep passes, best first: scored by
// the query's words found in a tool's name (twice) and description.
func (c *Catalog) Search(query string, keep func(tools.Definition) bool) []tools.Definition {
	q := words(query)
	type hit struct {
		d     tools.Definition
		score int
	}
	var hits []hit
	for _, d := range c.Definitions() {
		if !keep(d) {
			continue
		}
		name, desc := strings.Join(words(d.Name), " "), strings.Join(words(d.Description), " ")
		score := 0
		for _, w := range q {
			if strings.Contains(name, w) {
				score += 2
			}
			if strings.Contains(desc, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{d, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]tools.Definition, 0, searchLimit)
	for i := 0; i < len(hits) && i < searchLimit; i++ {
		out = append(out, hits[i].d)
	}
	return out
}

// Loaded are the catalogue tools each session's model has found with
// SearchTool (session id → names).
type Loaded struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

// Add marks names found in session.
func (l *Loaded) Add(session string, names ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]map[string]bool{}
	}
	if l.m[session] == nil {
		l.m[session] = map[string]bool{}
	}
	for _, n := range names {
		l.m[session][n] = true
	}
}

// Has reports whether session's model found name.
func (l *Loaded) Has(session, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[session][name]
}

// Names returns the names session's model found, sorted.
func (l *Loaded) Names(session string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.m[session]))
	for n := range l.m[session] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
