package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is one prompt template of a server (prompts/list): the composer
// offers it as "/server:name" and asks for its arguments.
type Prompt struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument a prompt asks for.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a filled prompt, as text.
type PromptMessage struct {
	Role string `json:"role"` // user | assistant
	Text string `json:"text"`
}

// offersPrompts reports whether the session's server announced prompts.
func offersPrompts(cs *sdk.ClientSession) bool {
	r := cs.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Prompts != nil
}

// Prompts lists the prompts of every ready server that offers them, asked
// each time (servers change them; a list is small), sorted by server and
// name. A server that fails to answer is left out and logged.
func (m *Manager) Prompts(ctx context.Context) []Prompt {
	servers := m.serverList()
	var out []Prompt
	for _, s := range servers {
		cs := s.current()
		if cs == nil || !offersPrompts(cs) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
		for p, err := range cs.Prompts(cctx, nil) {
			if err != nil {
				m.log.Warn("mcp: listing the server's prompts failed", "server", s.cfg.Name, "err", err)
				break
			}
			pr := Prompt{Server: s.cfg.Name, Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
			out = append(out, pr)
		}
		cancel()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// GetPrompt fills a server's prompt with args (prompts/get) and returns its
// messages as text: text content as is, other content named (an image,
// an embedded resource's text), as a tool result is rendered.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]PromptMessage, error) {
	s, cs, err := m.ready(server)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	res, err := cs.GetPrompt(cctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("prompt %q of MCP server %q: %w", name, server, err)
	}
	out := make([]PromptMessage, 0, len(res.Messages))
	for _, msg := range res.Messages {
		if msg == nil || msg.Content == nil {
			continue
		}
		text := strings.TrimSpace(m.render(&sdk.CallToolResult{Content: []sdk.Content{msg.Content}}, nil))
		out = append(out, PromptMessage{Role: string(msg.Role), Text: text})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("prompt %q of MCP server %q has no messages", name, server)
	}
	return out, nil
}
