package prompt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"jarvis/service/config"
	"jarvis/service/llm"
)

// seedAgents is docs/protocols/agents.md's configuration file plus agents exercising the
// capability lists alone.
const seedAgents = `{"agents": [
    {"agentId": "reading-list", "displayName": "Reading List Manager",
      "systemPrompt": "You are a reading list manager.",
      "toolAllowlist": ["reading_list_*"], "toolDenylist": ["reading_list_delete"],
      "toolExposure": "mixed", "skillAllowlist": ["notes"],
      "capabilityAllowlist": ["lists.*"], "capabilityDenylist": ["lists.write"],
      "agentAllowlist": ["todo", "journal"], "uiVisible": true, "apiExposed": false},
    {"agentId": "todo", "displayName": "Todo Manager", "systemPrompt": "You are a todo list manager.", "toolAllowlist": ["todo_*"], "uiVisible": true},
    {"agentId": "journal", "displayName": "Personal Journal", "systemPrompt": "You are a personal journal assistant.", "toolAllowlist": ["journal_*"], "uiVisible": true},
    {"agentId": "general", "displayName": "General Assistant", "systemPrompt": "You are a helpful general assistant.", "toolAllowlist": null, "uiVisible": true},
    {"agentId": "caps-only", "capabilityAllowlist": ["lists.*", "fs.read"]},
    {"agentId": "cap-deny", "capabilityDenylist": ["*.write"]},
    {"agentId": "empty-allow", "toolAllowlist": []},
    {"agentId": "deny-only", "toolDenylist": ["reading_list_*", "web_*"]}
]}`

// seedTools are tools named after docs/protocols/agents.md's examples, with capabilities.
var seedTools = []Tool{
	{Spec: llm.ToolSpec{Name: "reading_list_add"}, Capabilities: []string{"lists.read", "lists.add"}},
	{Spec: llm.ToolSpec{Name: "reading_list_list"}, Capabilities: []string{"lists.read"}},
	{Spec: llm.ToolSpec{Name: "reading_list_search"}},                                                   // no capabilities
	{Spec: llm.ToolSpec{Name: "reading_list_delete"}, Capabilities: []string{"lists.read"}},             // denied by name
	{Spec: llm.ToolSpec{Name: "reading_list_mark_read"}, Capabilities: []string{"lists.write"}},         // denied by capability
	{Spec: llm.ToolSpec{Name: "reading_list_export"}, Capabilities: []string{"lists.read", "fs.write"}}, // every capability must be allowed
	{Spec: llm.ToolSpec{Name: "todo_add"}, Capabilities: []string{"lists.write"}},
	{Spec: llm.ToolSpec{Name: "todo_list"}, Capabilities: []string{"lists.read"}},
	{Spec: llm.ToolSpec{Name: "journal_write"}, Capabilities: []string{"fs.write"}},
	{Spec: llm.ToolSpec{Name: "web_fetch"}, Capabilities: []string{"net.fetch"}},
	{Spec: llm.ToolSpec{Name: "system_time"}, Capabilities: []string{"os.clock"}},
	{Spec: llm.ToolSpec{Name: "read_file"}, Capabilities: []string{"fs.read"}},
}

func names(specs []llm.ToolSpec) []string {
	out := []string{}
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// getEffectiveTools exactly as docs/protocols/agents.md writes it, table-driven.
func TestEffectiveToolsSeedTable(t *testing.T) {
	c, err := config.Parse("seed.json", []byte(seedAgents))
	if err != nil {
		t.Fatal(err)
	}
	all := []string{}
	for _, tl := range seedTools {
		all = append(all, tl.Spec.Name)
	}
	cases := []struct {
		agent string
		want  []string
	}{
		// Allowlist by name, denylist after it, capabilities with every/some,
		// system_ tools always kept.
		{"reading-list", []string{"reading_list_add", "reading_list_list", "reading_list_search", "system_time"}},
		{"todo", []string{"todo_add", "todo_list", "system_time"}},
		{"journal", []string{"journal_write", "system_time"}},
		// No scoping at all: every tool.
		{"general", all},
		// Capability allowlist alone: tools without capabilities pass; a tool
		// passes only if every capability is allowed.
		{"caps-only", []string{"reading_list_add", "reading_list_list", "reading_list_search", "reading_list_delete", "reading_list_mark_read", "todo_add", "todo_list", "system_time", "read_file"}},
		// Capability denylist: any denied capability removes the tool.
		{"cap-deny", []string{"reading_list_add", "reading_list_list", "reading_list_search", "reading_list_delete", "todo_list", "web_fetch", "system_time", "read_file"}},
		// An empty allowlist is an allowlist: nothing but system_ tools.
		{"empty-allow", []string{"system_time"}},
		{"deny-only", []string{"todo_add", "todo_list", "journal_write", "system_time", "read_file"}},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			a, ok := c.Agent(tc.agent)
			if !ok {
				t.Fatal("no agent")
			}
			if got := names(EffectiveTools(a, seedTools)); !slices.Equal(got, tc.want) {
				t.Fatalf("effective tools\n got %v\nwant %v", got, tc.want)
			}
			// Execution uses the same predicate.
			for _, tl := range seedTools {
				if ToolInScope(a, tl.Spec.Name, tl.Capabilities) != slices.Contains(tc.want, tl.Spec.Name) {
					t.Fatalf("ToolInScope(%s) disagrees with the offered list", tl.Spec.Name)
				}
			}
		})
	}
}

func TestAgentVisibilityRules(t *testing.T) {
	c, err := config.Parse("x.json", []byte(`{"agents":[
 {"agentId":"general"},
 {"agentId":"todo","displayName":"Todo Manager","description":"manages tasks"},
 {"agentId":"journal","displayName":"Personal Journal"},
 {"agentId":"hidden","uiVisible":false},
 {"agentId":"rl","agentAllowlist":["todo","journal","hidden"],"agentDenylist":["journal"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(as []config.Agent) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.AgentID)
		}
		return out
	}
	g, _ := c.Agent("general")
	if got := ids(ReachableAgents(c, g)); !slices.Equal(got, []string{"todo", "journal", "rl"}) {
		t.Fatalf("general reaches %v", got)
	}
	rl, _ := c.Agent("rl")
	if got := ids(ReachableAgents(c, rl)); !slices.Equal(got, []string{"todo"}) {
		t.Fatalf("rl reaches %v", got)
	}
}

func TestBuildSystemPromptOrder(t *testing.T) {
	c, err := config.Parse("x.json", []byte(`{"systemPrompt":"GLOBAL","agents":[
 {"agentId":"general","displayName":"General Assistant","description":"Helps with anything.","toolExposure":"mixed"},
 {"agentId":"todo","displayName":"Todo Manager","description":"manages tasks and reminders"},
 {"agentId":"custom","systemPrompt":"You are custom."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := c.Agent("general")
	offered := []llm.ToolSpec{{Name: "read_file", Description: "Read a file."}, {Name: "system_time", Description: "hidden"}, {Name: "agents_message", Description: "Message an agent."}}
	skills := []Skill{{ID: "notes", Description: "Take notes", Path: "/d/skills/notes/SKILL.md", CLI: "/d/skills/notes/bin/notes"}}
	p := BuildSystemPrompt(c, g, offered, skills, "## Memory\nThe user likes tea.")
	want := []string{
		"You are General Assistant. Helps with anything.",
		"## Available tools\n- read_file: Read a file.\n- agents_message: Message an agent.\n",
		"## Available skills\n",
		"- notes: Take notes (SKILL.md: /d/skills/notes/SKILL.md; CLI: /d/skills/notes/bin/notes)",
		"## Memory\nThe user likes tea.",
		"## Available agents\nAvailable agents you can delegate to:\n- todo: Todo Manager - manages tasks and reminders\n- custom: custom\n",
		"Use agents_message to ask another agent",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(p[at:], w)
		if i < 0 {
			t.Fatalf("prompt lacks %q after offset %d:\n%s", w, at, p)
		}
		at += i + len(w)
	}
	if !strings.HasPrefix(p, want[0]) || strings.Contains(p, "system_time") {
		t.Fatalf("prompt:\n%s", p)
	}
	// Without agents_message there is no agents section; without tools no tools section.
	p = BuildSystemPrompt(c, g, nil, nil, "")
	if p != "You are General Assistant. Helps with anything." {
		t.Fatalf("bare prompt %q", p)
	}
	cu, _ := c.Agent("custom")
	if p := BuildSystemPrompt(c, cu, nil, nil, ""); p != "You are custom." {
		t.Fatalf("custom %q", p)
	}
	if p := BuildSystemPrompt(c, config.Agent{}, nil, nil, ""); p != "GLOBAL" {
		t.Fatalf("no agent %q", p)
	}
}

func TestSkillsScanAndFilter(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("notes/SKILL.md", "---\nname: Notes\ndescription: \"Take notes in Markdown\"\ncli: bin/notes\n---\n# Notes\n")
	write("notes/bin/notes", "#!/bin/sh\n")
	write("pdf/SKILL.md", "# PDF\nNo frontmatter.\n")
	write("escape/SKILL.md", "---\ncli: ../../etc/passwd\n---\n")
	write("not-a-skill/README.md", "x")
	write("loose.md", "x")
	all := ScanSkills(dir)
	if got := []string{all[0].ID, all[1].ID, all[2].ID}; len(all) != 3 || !slices.Equal(got, []string{"escape", "notes", "pdf"}) {
		t.Fatalf("skills %+v", all)
	}
	n := all[1]
	if n.Name != "Notes" || n.Description != "Take notes in Markdown" || n.Path != filepath.Join(dir, "notes", "SKILL.md") || n.CLI != filepath.Join(dir, "notes", "bin", "notes") {
		t.Fatalf("notes %+v", n)
	}
	if all[0].CLI != "" {
		t.Fatalf("a CLI outside the skill's folder was accepted: %q", all[0].CLI)
	}
	cases := []struct {
		allow, deny []string
		want        []string
	}{
		{nil, nil, []string{"escape", "notes", "pdf"}},
		{[]string{"notes"}, nil, []string{"notes"}},
		{[]string{"*"}, []string{"p*"}, []string{"escape", "notes"}},
		{[]string{}, nil, nil},
	}
	for _, tc := range cases {
		var got []string
		for _, sk := range FilterSkills(config.Agent{SkillAllowlist: tc.allow, SkillDenylist: tc.deny}, all) {
			got = append(got, sk.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("allow %v deny %v: %v, want %v", tc.allow, tc.deny, got, tc.want)
		}
	}
	// Skills are listed only with toolExposure skills or mixed.
	c := &SkillCache{Dir: dir}
	for exp, want := range map[string]int{"": 0, "tools": 0, "skills": 3, "mixed": 3} {
		if got := len(c.For(config.Agent{ToolExposure: exp})); got != want {
			t.Errorf("toolExposure %q lists %d skills, want %d", exp, got, want)
		}
	}
}
