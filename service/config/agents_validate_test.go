package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedConfig is docs/protocols/agents.md's configuration file, as written there.
const seedConfig = `{
  "agents": [
    {
      "agentId": "reading-list",
      "displayName": "Reading List Manager",
      "systemPrompt": "You are a reading list manager. Help the user track articles, papers, and links they want to read. You can add items, list the queue, search for items, and mark items as read.",
      "toolAllowlist": ["reading_list_*"],
      "toolDenylist": ["reading_list_delete"],
      "toolExposure": "mixed",
      "skillAllowlist": ["notes"],
      "capabilityAllowlist": ["lists.*"],
      "capabilityDenylist": ["lists.write"],
      "agentAllowlist": ["todo", "journal"],
      "uiVisible": true,
      "apiExposed": false
    },
    {
      "agentId": "todo",
      "displayName": "Todo Manager",
      "systemPrompt": "You are a todo list manager. Help the user track tasks, set reminders, and stay organized.",
      "toolAllowlist": ["todo_*"],
      "uiVisible": true
    },
    {
      "agentId": "journal",
      "displayName": "Personal Journal",
      "systemPrompt": "You are a personal journal assistant. Help the user reflect on their day, capture thoughts, and review past entries.",
      "toolAllowlist": ["journal_*"],
      "uiVisible": true
    },
    {
      "agentId": "general",
      "displayName": "General Assistant",
      "systemPrompt": "You are a helpful general assistant.",
      "toolAllowlist": null,
      "uiVisible": true
    }
  ]
}`

func TestAgentsSeedConfigParses(t *testing.T) {
	c, err := Parse("seed.json", []byte(seedConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) != 4 {
		t.Fatalf("agents %d", len(c.Agents))
	}
	rl, _ := c.Agent("reading-list")
	if rl.Type != TypeChat || rl.ToolExposure != "mixed" || !rl.Visible() || rl.APIExposed == nil || *rl.APIExposed {
		t.Fatalf("reading-list %+v", rl)
	}
	// "toolAllowlist": null is no allowlist at all (all tools), unlike [] (none).
	g, _ := c.Agent("general")
	if g.ToolAllowlist != nil {
		t.Fatalf("null allowlist decoded as %#v", g.ToolAllowlist)
	}
	c2, err := Parse("x.json", []byte(`{"agents":[{"agentId":"a","toolAllowlist":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Agents[0].ToolAllowlist == nil {
		t.Fatal("[] decoded as nil: an empty allowlist must allow nothing")
	}
	if c.MaxDelegationDepth != 3 {
		t.Fatalf("default maxDelegationDepth %d", c.MaxDelegationDepth)
	}
}

func TestAgentsDefaults(t *testing.T) {
	c := Defaults()
	if len(c.Agents) != 1 || c.Agents[0].AgentID != "general" || c.Agents[0].Type != TypeChat || !c.Agents[0].Visible() {
		t.Fatalf("default agents %+v", c.Agents)
	}
	if c.DefaultProvider != ProviderOpenAI || c.SystemPrompt != DefaultSystemPrompt || c.MaxDelegationDepth != 3 || c.MaxToolSteps != 25 {
		t.Fatalf("defaults %+v", c)
	}
	// A missing file is the defaults.
	c, err := Load(filepath.Join(t.TempDir(), "absent.json"))
	if err != nil || c.Agents[0].AgentID != "general" {
		t.Fatalf("missing file: %v %+v", err, c)
	}
	// An agent with no displayName shows its id.
	c, err = Parse("x.json", []byte(`{"agents":[{"agentId":"notes"}]}`))
	if err != nil || c.Agents[0].DisplayName != "notes" {
		t.Fatalf("%v %+v", err, c)
	}
}

// Every validation error names the file, the line, the agent and the field.
func TestAgentsValidationErrors(t *testing.T) {
	cases := []struct {
		name, body    string
		line          int
		field         string
		wantInMessage []string
	}{
		{"unknown provider", `{"agents": [
  {"agentId": "coder",
   "chat": {"provider": "gpt-cli"}}
]}`, 2, "agents[0].chat.provider", []string{`agent "coder"`, `unknown provider "gpt-cli"`, "claude-cli"}},
		{"duplicate id", `{"agents": [
  {"agentId": "notes"},
  {"agentId": "todo"},
  {"agentId": "todo"}
]}`, 4, "agents[2].agentId", []string{`duplicate agentId "todo"`}},
		{"bad glob", `{"agents": [
  {"agentId": "general"},
  {"agentId": "rl", "toolAllowlist": ["reading_[list"]}
]}`, 3, "agents[1].toolAllowlist", []string{`agent "rl"`, `bad glob "reading_[list"`}},
		{"bad agent glob", `{"agents": [{"agentId": "rl", "agentDenylist": ["\\"]}]}`, 1, "agents[0].agentDenylist", []string{`agent "rl"`}},
		{"missing id", `{"agents": [
  {"displayName": "Nameless"}
]}`, 1, "agents[0].agentId", []string{"agentId is required"}},
		{"bad id", `{"agents": [{"agentId": "has space"}]}`, 1, "agents[0].agentId", []string{`agent "has space"`}},
		{"unknown type", `{"agents": [
  {"agentId": "x", "type": "robot"}
]}`, 2, "agents[0].type", []string{`agent "x"`, `unknown type "robot"`}},
		{"bad exposure", `{"agents": [{"agentId": "x", "toolExposure": "plugins"}]}`, 1, "agents[0].toolExposure", []string{`agent "x"`, "tools, skills or mixed"}},
		{"relative workDir", `{"agents": [{"agentId": "x", "chat": {"provider": "claude-cli", "workDir": "code"}}]}`, 1, "agents[0].chat.workDir", []string{"absolute"}},
		{"reserved CLI arg", `{"agents": [
  {"agentId": "c", "chat": {"provider": "codex-cli", "args": ["--full-auto"]}}]}`, 2, "agents[0].chat.args", []string{`agent "c"`, "--full-auto", "permissionMode"}},
		{"args on a model provider", `{"agents": [{"agentId": "m", "chat": {"provider": "openai", "args": ["--x"]}}]}`, 1, "agents[0].chat.args", []string{"only the claude-cli"}},
		{"unknown permission mode", `{"agents": [{"agentId": "p", "chat": {"provider": "pi-cli", "permissionMode": "yolo"}}]}`, 1, "agents[0].chat.permissionMode", []string{"read-only, edit, full"}},
		{"unknown default provider", `{
"defaultProvider": "anthropic"}`, 2, "defaultProvider", []string{`unknown provider "anthropic"`}},
		{"unknown providers key", `{"providers": {
  "azure": {}}}`, 2, "providers.azure", []string{`unknown provider "azure"`}},
		{"negative depth", `{
  "maxDelegationDepth": -1}`, 2, "maxDelegationDepth", []string{"positive"}},
		{"unknown field", `{"agents": [
  {"agentId": "x", "tolAllowlist": []}]}`, 2, "tolAllowlist", []string{"unknown field"}},
		{"wrong type", `{"agents": [
  {"agentId": "x", "toolAllowlist": "read_*"}]}`, 2, "agents.toolAllowlist", []string{"expected []string"}},
		{"syntax", `{"agents": [
  {"agentId": "x",}]}`, 2, "", []string{"invalid JSON"}},
		{"trailing content", `{"agents": []}
{}`, 2, "", []string{"unexpected content"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("conf.json", []byte(tc.body))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err %v, want a *config.Error", err)
			}
			if ce.File != "conf.json" || ce.Line != tc.line || ce.Field != tc.field {
				t.Fatalf("error at %s:%d field %q, want line %d field %q (%v)", ce.File, ce.Line, ce.Field, tc.line, tc.field, err)
			}
			for _, w := range tc.wantInMessage {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err.Error(), w)
				}
			}
		})
	}
}

func TestAgentsLoadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(p, []byte(`{"agents": [{"agentId": "a"}, {"agentId": "a"}]}`), 0o600)
	_, err := Load(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+":1: field agents[1].agentId: ") {
		t.Fatalf("err %v", err)
	}
}

func TestAgentsResolvedChat(t *testing.T) {
	c, err := Parse("x.json", []byte(`{"defaultProvider":"openai-compatible",
"providers":{"openai-compatible":{"baseUrl":"http://127.0.0.1:11434/v1","model":"llama3.2"},"claude-cli":{"model":"sonnet"}},
"agents":[{"agentId":"a"},{"agentId":"b","chat":{"provider":"claude-cli","workDir":"/tmp/x"}},{"agentId":"c","chat":{"provider":"openai"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Agent("a")
	if ch := c.ResolvedChat(a); ch.Provider != "openai-compatible" || ch.Model != "llama3.2" || ch.BaseURL == "" {
		t.Fatalf("a %+v", ch)
	}
	b, _ := c.Agent("b")
	if ch := c.ResolvedChat(b); ch.Provider != "claude-cli" || ch.Model != "sonnet" || ch.WorkDir != "/tmp/x" {
		t.Fatalf("b %+v", ch)
	}
	cc, _ := c.Agent("c")
	if ch := c.ResolvedChat(cc); ch.Model != "gpt-4o-mini" || ch.APIKeyRef != "openai" {
		t.Fatalf("c %+v", ch)
	}
}
