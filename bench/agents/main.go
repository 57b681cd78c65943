// Command agents measures the per-turn cost of docs/protocols/agents.md's agent machinery:
// the effective-tool computation (getEffectiveTools over every tool) and the
// system prompt construction (base, tools, skills, agents sections), with a
// large configuration: 200 agents and 500 tools by default.
//
//	go run ./bench/agents [-agents 200] [-tools 500] [-skills 20]
//
// It prints a Markdown table: figure, per turn, goal, verdict. The baseline
// row is the cost of copying the tool list unfiltered, the least a turn must
// spend on it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/prompt"
)

func main() {
	nAgents := flag.Int("agents", 200, "configured agents")
	nTools := flag.Int("tools", 500, "tools")
	nSkills := flag.Int("skills", 20, "skills in <data-dir>/skills")
	flag.Parse()
	if err := run(*nAgents, *nTools, *nSkills); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var caps = []string{"fs.read", "fs.write", "lists.read", "lists.write", "net.fetch", "os.exec", "os.launch", "clipboard.read"}

func tools(n int) []prompt.Tool {
	out := make([]prompt.Tool, 0, n+1)
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	for i := 0; i < n; i++ {
		t := prompt.Tool{Spec: llm.ToolSpec{Name: fmt.Sprintf("grp%d_tool_%d", i%25, i),
			Description: fmt.Sprintf("Tool number %d of group %d: does one precise thing with the user's data and reports back.", i, i%25),
			Parameters:  schema}}
		for k := 0; k < i%4; k++ {
			t.Capabilities = append(t.Capabilities, caps[(i+k)%len(caps)])
		}
		if i%50 == 0 {
			t.Spec.Name = fmt.Sprintf("system_%d", i)
		}
		out = append(out, t)
	}
	return append(out, prompt.Tool{Spec: llm.ToolSpec{Name: "agents_message", Description: "Send a message to another agent."}, Capabilities: []string{"agents.message"}})
}

func agents(n int) (*config.Config, error) {
	var as []string
	for i := 0; i < n; i++ {
		a := map[string]any{"agentId": fmt.Sprintf("agent-%03d", i), "displayName": fmt.Sprintf("Agent %d", i),
			"description": fmt.Sprintf("Specialist number %d: handles one family of tasks for the user.", i), "toolExposure": "mixed"}
		switch i % 4 {
		case 1:
			a["toolAllowlist"] = []string{fmt.Sprintf("grp%d_*", i%25), "grp1?_tool_*", "agents_*"}
			a["agentAllowlist"] = []string{"agent-0*", "agent-1[0-4]*"}
		case 2:
			a["capabilityAllowlist"] = []string{"fs.*", "lists.*", "agents.*"}
			a["capabilityDenylist"] = []string{"*.write"}
			a["skillAllowlist"] = []string{"skill-1*"}
		case 3:
			a["toolDenylist"] = []string{"grp2*", "grp3_*"}
			a["agentDenylist"] = []string{"agent-19*"}
		}
		if i%10 == 0 {
			a["uiVisible"] = false
		}
		b, _ := json.Marshal(a)
		as = append(as, string(b))
	}
	return config.Parse("bench.json", []byte(`{"agents":[`+strings.Join(as, ",")+`]}`))
}

func run(nAgents, nTools, nSkills int) error {
	c, err := agents(nAgents)
	if err != nil {
		return err
	}
	all := tools(nTools)
	var skills []prompt.Skill
	for i := 0; i < nSkills; i++ {
		skills = append(skills, prompt.Skill{ID: fmt.Sprintf("skill-%d", i), Description: "A skill.", Path: fmt.Sprintf("/data/skills/skill-%d/SKILL.md", i)})
	}
	memory := "## Memory\nThe user prefers short answers."
	per := func(fn func(a config.Agent)) time.Duration {
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				fn(c.Agents[i%len(c.Agents)])
			}
		})
		return time.Duration(r.NsPerOp())
	}
	var sink int
	baseline := per(func(a config.Agent) {
		out := make([]llm.ToolSpec, 0, len(all))
		for _, t := range all {
			out = append(out, t.Spec)
		}
		sink += len(out)
	})
	effective := per(func(a config.Agent) { sink += len(prompt.EffectiveTools(a, all)) })
	offered := map[string][]llm.ToolSpec{}
	for _, a := range c.Agents {
		offered[a.AgentID] = prompt.EffectiveTools(a, all)
	}
	built := per(func(a config.Agent) {
		sink += len(prompt.BuildSystemPrompt(c, a, offered[a.AgentID], prompt.FilterSkills(a, skills), memory))
	})
	turn := per(func(a config.Agent) {
		sink += len(prompt.BuildSystemPrompt(c, a, prompt.EffectiveTools(a, all), prompt.FilterSkills(a, skills), memory))
	})
	size := 0
	for _, a := range c.Agents {
		size += len(prompt.BuildSystemPrompt(c, a, offered[a.AgentID], prompt.FilterSkills(a, skills), memory))
	}
	_ = sink
	verdict := func(d time.Duration) string {
		if d < time.Millisecond {
			return "ok"
		}
		return "SLOW"
	}
	fmt.Printf("Agents: %d agents, %d tools, %d skills; figures per turn, averaged over every agent.\n\n", len(c.Agents), len(all), nSkills)
	fmt.Println("| figure | per turn | goal | verdict |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| baseline: copy the tool list unfiltered | %s | - | - |\n", baseline)
	fmt.Printf("| effective tools (getEffectiveTools) | %s | - | - |\n", effective)
	fmt.Printf("| system prompt (tools, skills, memory, agents) | %s | - | - |\n", built)
	fmt.Printf("| both: one turn's scoping and prompt | %s | < 1 ms | %s |\n", turn, verdict(turn))
	fmt.Printf("| mean prompt size | %d bytes | - | - |\n", size/len(c.Agents))
	return nil
}
