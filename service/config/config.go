// Package config reads the service's JSON configuration file (docs/guide/configuration.md):
// agent definitions with every field of docs/protocols/agents.md's AgentDefinition, provider
// defaults, and the service's limits. A missing file means built-in defaults;
// a malformed one is an error naming the file, line and field. Secrets are
// never in the file: it names them (apiKeyRef) and package secrets resolves them.
//
// A *Config is immutable once loaded; reload by loading a new one.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Chat provider kinds of docs/protocols/agents.md.
const (
	ProviderOpenAI           = "openai"
	ProviderOpenAICompatible = "openai-compatible"
	ProviderClaudeCLI        = "claude-cli"
	ProviderCodexCLI         = "codex-cli"
	ProviderPiCLI            = "pi-cli"
	// ProviderACP runs an Agent Client Protocol agent (chat.command).
	ProviderACP = "acp"
)

// Agent types.
const (
	TypeChat       = "chat"
	TypeExternal   = "external"
	TypeProxy      = "proxy"
	TypeRoundtable = "roundtable"
	TypeA2A        = "a2a"
)

// Config is the whole file.
type Config struct {
	Agents    []Agent             `json:"agents"`
	Providers map[string]Provider `json:"providers,omitempty"`
	// DefaultProvider is the provider kind of chat agents that name none.
	DefaultProvider string `json:"defaultProvider,omitempty"`
	// ToolResultTimeoutSeconds: a tool call with no result from the desktop
	// within this time is answered as denied (fail closed). Default 300.
	ToolResultTimeoutSeconds int `json:"toolResultTimeoutSeconds,omitempty"`
	// UpstreamTimeoutSeconds bounds one model call. Default 300.
	UpstreamTimeoutSeconds int `json:"upstreamTimeoutSeconds,omitempty"`
	// MaxToolSteps bounds model↔tool round trips in one turn. Default 25.
	MaxToolSteps int `json:"maxToolSteps,omitempty"`
	// MaxBodyBytes caps request bodies. Default 1 MiB.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// SystemPrompt is the global default base prompt.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// MaxDelegationDepth bounds agents_message chains (A → B → C counts 2).
	// Default 3.
	MaxDelegationDepth int `json:"maxDelegationDepth,omitempty"`
	// Memory configures memory search.
	Memory Memory `json:"memory,omitzero"`
}

// Memory configures memory search. With an embedding model, search is
// hybrid (words and meaning); without, it is keyword search. Read at start.
type Memory struct {
	// EmbeddingProvider is "openai" or "openai-compatible": its baseUrl and
	// apiKeyRef (providers) serve /v1/embeddings. Empty: no embeddings.
	EmbeddingProvider string `json:"embeddingProvider,omitempty"`
	// EmbeddingModel is the model to ask for, e.g. "text-embedding-3-small"
	// or Ollama's "nomic-embed-text". Required with EmbeddingProvider.
	EmbeddingModel string `json:"embeddingModel,omitempty"`
	// EmbeddingBaseURL overrides the provider's baseUrl (embeddings served
	// elsewhere than chat).
	EmbeddingBaseURL string `json:"embeddingBaseUrl,omitempty"`
}

// ResolvedEmbedding returns where memory embeddings come from: base URL,
// model and API key reference; ok is false when none is configured.
func (c *Config) ResolvedEmbedding() (baseURL, model, apiKeyRef string, ok bool) {
	m := c.Memory
	if m.EmbeddingProvider == "" {
		return "", "", "", false
	}
	ch := c.ResolvedChat(Agent{Chat: &Chat{Provider: m.EmbeddingProvider, BaseURL: m.EmbeddingBaseURL, Model: m.EmbeddingModel}})
	return ch.BaseURL, m.EmbeddingModel, ch.APIKeyRef, true
}

// Provider holds defaults for one provider kind.
type Provider struct {
	BaseURL   string `json:"baseUrl,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyRef string `json:"apiKeyRef,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 means the
	// built-in value for the model's family or what the server reports.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Chat configures a chat agent's provider; empty fields fall back to the provider defaults.
type Chat struct {
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	BaseURL   string `json:"baseUrl,omitempty"`
	APIKeyRef string `json:"apiKeyRef,omitempty"`
	// WorkDir is where a CLI provider (claude-cli, codex-cli, pi-cli) runs;
	// the CLIs keep their sessions per directory. Default
	// <data-dir>/cli/<agentId>. Must be absolute.
	WorkDir string `json:"workDir,omitempty"`
	// Args are extra arguments for a CLI provider's program, flags and
	// their values (e.g. ["--max-turns", "8"]); flags Jarvis sets itself
	// are refused (cliopts.CheckArgs).
	Args []string `json:"args,omitempty"`
	// PermissionMode is what a CLI provider's own tools may do, which run
	// outside Jarvis's gate: "read-only" (default), "edit" or "full".
	PermissionMode string `json:"permissionMode,omitempty"`
	// Sandbox false runs a CLI provider's program without Jarvis's sandbox,
	// with the user's full access (default: in the sandbox wherever the
	// CLI's own does not apply). The config file's approval names it.
	Sandbox *bool `json:"sandbox,omitempty"`
	// Command starts an acp provider's agent (with Args), e.g. "npx".
	Command string `json:"command,omitempty"`
	// Env is added to an acp agent's environment; a value "secret:REF"
	// is the keyring secret REF.
	Env map[string]string `json:"env,omitempty"`
	// ContextWindow is the model's context window in tokens (wins over the
	// provider's); 0 means the provider's, the server's or the built-in value.
	ContextWindow int `json:"contextWindow,omitempty"`
	// KeepRecentPercent is the share of the window kept verbatim (newest
	// turns) when older turns are summarized. Default 30.
	KeepRecentPercent int `json:"keepRecentPercent,omitempty"`
	// ReplyReserveTokens is kept free for the model's reply. Default a
	// quarter of the window, at most 4,096.
	ReplyReserveTokens int `json:"replyReserveTokens,omitempty"`
	// MemoryFlush gives the agent one silent memory_write step before its
	// conversation is compacted. Default true.
	MemoryFlush *bool `json:"memoryFlush,omitempty"`
}

// FlushMemory reports whether compaction first lets the agent save to memory.
func (ch Chat) FlushMemory() bool { return ch.MemoryFlush == nil || *ch.MemoryFlush }

// Agent is docs/protocols/agents.md's AgentDefinition plus the runtime type and its settings.
type Agent struct {
	AgentID             string          `json:"agentId"`
	DisplayName         string          `json:"displayName"`
	Description         string          `json:"description,omitempty"`
	SystemPrompt        string          `json:"systemPrompt,omitempty"`
	Type                string          `json:"type,omitempty"`
	Chat                *Chat           `json:"chat,omitempty"`
	ToolAllowlist       []string        `json:"toolAllowlist,omitempty"`
	ToolDenylist        []string        `json:"toolDenylist,omitempty"`
	ToolExposure        string          `json:"toolExposure,omitempty"`
	SkillAllowlist      []string        `json:"skillAllowlist,omitempty"`
	SkillDenylist       []string        `json:"skillDenylist,omitempty"`
	CapabilityAllowlist []string        `json:"capabilityAllowlist,omitempty"`
	CapabilityDenylist  []string        `json:"capabilityDenylist,omitempty"`
	AgentAllowlist      []string        `json:"agentAllowlist,omitempty"`
	AgentDenylist       []string        `json:"agentDenylist,omitempty"`
	UIVisible           *bool           `json:"uiVisible,omitempty"`
	APIExposed          *bool           `json:"apiExposed,omitempty"`
	External            json.RawMessage `json:"external,omitempty"`
	Proxy               json.RawMessage `json:"proxy,omitempty"`
	Roundtable          json.RawMessage `json:"roundtable,omitempty"`
	A2A                 json.RawMessage `json:"a2a,omitempty"`
}

// Visible reports whether built-in clients show the agent (uiVisible, default true).
func (a Agent) Visible() bool { return a.UIVisible == nil || *a.UIVisible }

// DefaultSystemPrompt is the global base prompt when neither the file nor an agent gives one.
const DefaultSystemPrompt = "You are Jarvis, a helpful desktop assistant. Be concise. When an action on the user's computer is needed, call a tool; the user's desktop decides whether it runs."

// Defaults returns the built-in configuration: one general chat agent on OpenAI.
func Defaults() *Config {
	c := &Config{}
	c.fill()
	return c
}

func (c *Config) fill() {
	if len(c.Agents) == 0 {
		c.Agents = []Agent{{AgentID: "general", DisplayName: "General Assistant", Description: "A helpful general assistant."}}
	}
	for i := range c.Agents {
		if c.Agents[i].Type == "" {
			c.Agents[i].Type = TypeChat
		}
	}
	if c.Providers == nil {
		c.Providers = map[string]Provider{}
	}
	if c.DefaultProvider == "" {
		c.DefaultProvider = ProviderOpenAI
	}
	if c.ToolResultTimeoutSeconds <= 0 {
		c.ToolResultTimeoutSeconds = 300
	}
	if c.UpstreamTimeoutSeconds <= 0 {
		c.UpstreamTimeoutSeconds = 300
	}
	if c.MaxToolSteps <= 0 {
		c.MaxToolSteps = 25
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.SystemPrompt == "" {
		c.SystemPrompt = DefaultSystemPrompt
	}
	if c.MaxDelegationDepth == 0 {
		c.MaxDelegationDepth = 3
	}
}

// ToolResultTimeout returns the tool-result wait limit.
func (c *Config) ToolResultTimeout() time.Duration {
	return time.Duration(c.ToolResultTimeoutSeconds) * time.Second
}

// UpstreamTimeout returns the model-call limit.
func (c *Config) UpstreamTimeout() time.Duration {
	return time.Duration(c.UpstreamTimeoutSeconds) * time.Second
}

// Agent returns the agent with id.
func (c *Config) Agent(id string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.AgentID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// ResolvedChat returns the effective chat settings of a chat agent:
// its own fields, then its provider's defaults, then the default provider.
func (c *Config) ResolvedChat(a Agent) Chat {
	var ch Chat
	if a.Chat != nil {
		ch = *a.Chat
	}
	if ch.Provider == "" {
		ch.Provider = c.DefaultProvider
	}
	p := c.Providers[ch.Provider]
	if ch.Model == "" {
		ch.Model = p.Model
	}
	if ch.BaseURL == "" {
		ch.BaseURL = p.BaseURL
	}
	if ch.APIKeyRef == "" {
		ch.APIKeyRef = p.APIKeyRef
	}
	if ch.ContextWindow == 0 {
		ch.ContextWindow = p.ContextWindow
	}
	if ch.APIKeyRef == "" && ch.Provider == ProviderOpenAI {
		ch.APIKeyRef = "openai"
	}
	if ch.Model == "" && ch.Provider == ProviderOpenAI {
		ch.Model = "gpt-4o-mini"
	}
	return ch
}

// Error is a configuration error with its place in the file.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // JSON path of the offending field, when known
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads the file at path; a missing file gives Defaults().
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Parse(path, b)
}

// Parse decodes and validates a configuration file's content.
func Parse(name string, b []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, decodeError(name, b, dec, err)
	}
	if dec.More() {
		return nil, &Error{File: name, Line: lineAt(b, dec.InputOffset()), Msg: "unexpected content after the JSON object"}
	}
	c.fill()
	if err := c.validate(name, b); err != nil {
		return nil, err
	}
	return &c, nil
}

func decodeError(name string, b []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &Error{File: name, Line: lineAt(b, se.Offset), Msg: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &Error{File: name, Line: lineAt(b, te.Offset), Field: te.Field, Msg: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		line := lineOf(b, `"`+field+`"`)
		if line == 0 {
			line = lineAt(b, dec.InputOffset())
		}
		return &Error{File: name, Line: line, Field: field, Msg: "unknown field"}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{File: name, Line: lineAt(b, int64(len(b))), Msg: "empty or truncated file"}
	}
	return &Error{File: name, Line: lineAt(b, dec.InputOffset()), Msg: err.Error()}
}

func lineAt(b []byte, off int64) int {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return bytes.Count(b[:off], []byte("\n")) + 1
}

// lineOfNth returns the line of the occurrence n (from 0) of needle, 0 when absent.
func lineOfNth(b []byte, needle string, n int) int {
	off := 0
	for ; n >= 0; n-- {
		i := bytes.Index(b[off:], []byte(needle))
		if i < 0 {
			return 0
		}
		if n == 0 {
			return lineAt(b, int64(off+i))
		}
		off += i + len(needle)
	}
	return 0
}

// lineOf returns the line of the first occurrence of needle, 0 when absent.
func lineOf(b []byte, needle string) int {
	i := bytes.Index(b, []byte(needle))
	if i < 0 {
		return 0
	}
	return lineAt(b, int64(i))
}

// minContextWindow is the smallest window the service plans for: a system
// prompt, a summary, a few turns and a reply.
const minContextWindow = 1024

var agentIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var knownProviders = []string{ProviderOpenAI, ProviderOpenAICompatible, ProviderClaudeCLI, ProviderCodexCLI, ProviderPiCLI, ProviderACP}

func (c *Config) validate(name string, b []byte) error {
	fail := func(field, needle, msg string) error {
		return &Error{File: name, Line: lineOf(b, needle), Field: field, Msg: msg}
	}
	if !slices.Contains(knownProviders, c.DefaultProvider) {
		return fail("defaultProvider", `"defaultProvider"`, fmt.Sprintf("unknown provider %q (known: %s)", c.DefaultProvider, strings.Join(knownProviders, ", ")))
	}
	for k := range c.Providers {
		if !slices.Contains(knownProviders, k) {
			return fail("providers."+k, `"`+k+`"`, fmt.Sprintf("unknown provider %q (known: %s)", k, strings.Join(knownProviders, ", ")))
		}
	}
	if p := c.Memory.EmbeddingProvider; p != "" {
		if p != ProviderOpenAI && p != ProviderOpenAICompatible {
			return fail("memory.embeddingProvider", `"embeddingProvider"`, fmt.Sprintf("embeddings need an OpenAI-compatible provider (%s or %s), got %q", ProviderOpenAI, ProviderOpenAICompatible, p))
		}
		if strings.TrimSpace(c.Memory.EmbeddingModel) == "" {
			return fail("memory.embeddingModel", `"embeddingProvider"`, "embeddingModel is required with embeddingProvider (e.g. text-embedding-3-small, nomic-embed-text)")
		}
	} else if c.Memory.EmbeddingModel != "" {
		return fail("memory.embeddingProvider", `"embeddingModel"`, "embeddingProvider is required with embeddingModel (openai or openai-compatible)")
	}
	for k, p := range c.Providers {
		if p.ContextWindow != 0 && p.ContextWindow < minContextWindow {
			return fail("providers."+k+".contextWindow", `"contextWindow"`, fmt.Sprintf("must be at least %d tokens, got %d", minContextWindow, p.ContextWindow))
		}
	}
	if c.MaxDelegationDepth < 0 {
		return fail("maxDelegationDepth", `"maxDelegationDepth"`, fmt.Sprintf("must be a positive number of hops, got %d", c.MaxDelegationDepth))
	}
	seen := map[string]bool{}
	for i, a := range c.Agents {
		at := fmt.Sprintf("agents[%d]", i)
		needle := `"` + a.AgentID + `"`
		if a.AgentID == "" {
			return fail(at+".agentId", `"agents"`, "agentId is required")
		}
		if !agentIDPattern.MatchString(a.AgentID) {
			return fail(at+".agentId", needle, fmt.Sprintf("agent %q: agentId must be 1-64 characters of A-Z a-z 0-9 _ -", a.AgentID))
		}
		if seen[a.AgentID] {
			// Point at the duplicate, not at the first agent with that id.
			line := lineOfNth(b, `"agentId"`, i)
			if line == 0 {
				line = lineOf(b, needle)
			}
			return &Error{File: name, Line: line, Field: at + ".agentId", Msg: fmt.Sprintf("duplicate agentId %q", a.AgentID)}
		}
		seen[a.AgentID] = true
		if a.DisplayName == "" {
			c.Agents[i].DisplayName = a.AgentID
		}
		switch a.Type {
		case TypeChat, TypeExternal, TypeProxy, TypeRoundtable, TypeA2A:
		default:
			return fail(at+".type", needle, fmt.Sprintf("agent %q: unknown type %q (chat, external, proxy, roundtable, a2a)", a.AgentID, a.Type))
		}
		if a.Chat != nil && a.Chat.Provider != "" && !slices.Contains(knownProviders, a.Chat.Provider) {
			return fail(at+".chat.provider", needle, fmt.Sprintf("agent %q: unknown provider %q (known: %s)", a.AgentID, a.Chat.Provider, strings.Join(knownProviders, ", ")))
		}
		if ch := a.Chat; ch != nil {
			switch {
			case ch.ContextWindow != 0 && ch.ContextWindow < minContextWindow:
				return fail(at+".chat.contextWindow", needle, fmt.Sprintf("agent %q: chat.contextWindow must be at least %d tokens, got %d", a.AgentID, minContextWindow, ch.ContextWindow))
			case ch.KeepRecentPercent < 0 || ch.KeepRecentPercent > 60:
				return fail(at+".chat.keepRecentPercent", needle, fmt.Sprintf("agent %q: chat.keepRecentPercent must be between 1 and 60, got %d", a.AgentID, ch.KeepRecentPercent))
			case ch.ReplyReserveTokens < 0:
				return fail(at+".chat.replyReserveTokens", needle, fmt.Sprintf("agent %q: chat.replyReserveTokens must not be negative, got %d", a.AgentID, ch.ReplyReserveTokens))
			}
		}
		if err := c.checkCLIOptions(a); err != nil {
			return fail(at+".chat."+err.field, needle, fmt.Sprintf("agent %q: chat.%s: %v", a.AgentID, err.field, err.err))
		}
		if a.Chat != nil && a.Chat.WorkDir != "" && !filepath.IsAbs(a.Chat.WorkDir) {
			return fail(at+".chat.workDir", needle, fmt.Sprintf("agent %q: chat.workDir must be an absolute path, got %q", a.AgentID, a.Chat.WorkDir))
		}
		switch a.ToolExposure {
		case "", "tools", "skills", "mixed":
		default:
			return fail(at+".toolExposure", needle, fmt.Sprintf("agent %q: toolExposure must be tools, skills or mixed", a.AgentID))
		}
		lists := []struct {
			field string
			pats  []string
		}{{"toolAllowlist", a.ToolAllowlist}, {"toolDenylist", a.ToolDenylist}, {"skillAllowlist", a.SkillAllowlist},
			{"skillDenylist", a.SkillDenylist}, {"capabilityAllowlist", a.CapabilityAllowlist}, {"capabilityDenylist", a.CapabilityDenylist},
			{"agentAllowlist", a.AgentAllowlist}, {"agentDenylist", a.AgentDenylist}}
		for _, l := range lists { // in a fixed order: the first bad glob is always the one reported
			field := l.field
			for _, p := range l.pats {
				if _, err := path.Match(p, ""); err != nil {
					return fail(at+"."+field, needle, fmt.Sprintf("agent %q: bad glob %q in %s", a.AgentID, p, field))
				}
			}
		}
	}
	return nil
}

// IsCLIProvider reports a provider that is a coding CLI run as a program
// (claude-cli, codex-cli, pi-cli) rather than a model server.
func IsCLIProvider(p string) bool {
	switch p {
	case ProviderClaudeCLI, ProviderCodexCLI, ProviderPiCLI:
		return true
	}
	return false
}
