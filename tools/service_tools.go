package tools

// Service-run tools the gate judges. agents_message and round_table run in
// the service, but they can send conversation and memory text out of the
// process (to an external, proxy, CLI or round-table agent: another
// program, possibly another machine). The service then sends them to the
// desktop as a tool.request (source "service") and runs them only when the
// gate allows; the desktop's Executor "runs" them by approving. Their
// definitions live here, once, for both sides: the service offers these
// schemas to models, the gate decodes and classifies with them.

import (
	"context"
	"encoding/json"
	"fmt"
)

// ServiceDefinitions returns the service-run tools that pass the gate.
func ServiceDefinitions() []Definition {
	return []Definition{
		{Name: "agents_message", Risk: Risky, Capabilities: []string{"agents.message"},
			Description: "Send a message to another agent and get its reply (sync) or start its work in the background (async). The exchange is kept in that agent's session.",
			Parameters: schema(`{"type":"object","properties":{
"agentId":{"type":"string","description":"The target agent's id (see Available agents)."},
"content":{"type":"string","description":"The message, sent to the agent as a user message."},
"session":{"type":"string","description":"Which of the agent's sessions: \"latest-or-create\" (default), \"latest\", \"create\", or a session id of that agent."},
"mode":{"type":"string","enum":["sync","async"],"description":"\"sync\" (default) waits for the reply; \"async\" starts the work and returns at once."},
"timeout":{"type":"number","description":"Sync mode: seconds to wait for the reply (default 300). On timeout the agent keeps working in its session."}},
"required":["agentId","content"],"additionalProperties":false}`)},
		{Name: "round_table", Risk: Risky, Capabilities: []string{"roundtable"},
			Description: "Ask the registered expert agents to deliberate on a task in a round table (independent analyses, challenges, a synthesis, a vote). Returns the result as Markdown. Use it for reviews and decisions that benefit from several independent opinions; it may take minutes.",
			Parameters: schema(`{"type":"object","properties":{` +
				`"task":{"type":"string","description":"The task or question, with everything the agents need to know"},` +
				`"participants":{"type":"array","items":{"type":"string"},"description":"Names of registered agents; omit to choose by relevance"},` +
				`"constraints":{"type":"array","items":{"type":"string"},"description":"Rules the analyses must follow"}},` +
				`"required":["task"],"additionalProperties":false}`)},
		{Name: "schedule_task", Risk: Risky, Capabilities: []string{"tasks.schedule"},
			Description: "Schedule a recurring or one-off task the user asked for; the user confirms it first.",
			Parameters: schema(`{"type":"object","properties":{
"name":{"type":"string"},
"prompt":{"type":"string","description":"What to do at each run."},
"schedule":{"type":"string","description":"e.g. \"every weekday at 8:00\", \"every Monday\", \"hourly\", \"at 2026-12-01 09:00\", or cron."},
"time_zone":{"type":"string"},
"catch_up":{"type":"string","enum":["once","skip"]},
"tools":{"type":"array","items":{"type":"string"},"description":"The only tools it may use."}},
"required":["name","prompt","schedule"],"additionalProperties":false}`)},
		// Not offered to models: an ACP agent's session/request_permission,
		// which the service turns into a gated tool request.
		{Name: AgentPermissionTool, Risk: Risky, Capabilities: []string{"acp.permission"},
			Description: "A coding agent (Agent Client Protocol) asks permission to run one of its own tools.",
			Parameters: schema(`{"type":"object","properties":{
"agent":{"type":"string","description":"The Jarvis agent that asks."},
"title":{"type":"string","description":"What the agent wants to do, in its words."},
"kind":{"type":"string","description":"read, edit, delete, move, search, execute, think, fetch or other"},
"input":{"description":"The tool's input as the agent reported it."},
"locations":{"type":"array","items":{"type":"string"},"description":"Files the call touches."}},
"required":["agent","title"],"additionalProperties":false}`)},
	}
}

// AgentPermissionTool is the gated request for an ACP agent's permission.
const AgentPermissionTool = "agent_permission"

// AgentPermissionArgs are agent_permission's arguments.
type AgentPermissionArgs struct {
	Agent     string          `json:"agent"`
	Title     string          `json:"title"`
	Kind      string          `json:"kind"`
	Input     json.RawMessage `json:"input"`
	Locations []string        `json:"locations"`
}

// AgentsMessageArgs are agents_message's arguments.
type AgentsMessageArgs struct {
	AgentID string   `json:"agentId"`
	Content string   `json:"content"`
	Session string   `json:"session"`
	Mode    string   `json:"mode"`
	Timeout *float64 `json:"timeout"`
}

// ScheduleTaskArgs are schedule_task's arguments.
type ScheduleTaskArgs struct {
	Name     string   `json:"name"`
	Prompt   string   `json:"prompt"`
	Schedule string   `json:"schedule"`
	TimeZone string   `json:"time_zone"`
	CatchUp  string   `json:"catch_up"`
	Tools    []string `json:"tools"`
}

func (e *Executor) prepareScheduleTask(args json.RawMessage) (*call, error) {
	var a ScheduleTaskArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Name == "" || a.Prompt == "" || a.Schedule == "" {
		return nil, fmt.Errorf("%w: name, prompt and schedule are required", ErrBadArguments)
	}
	canon := map[string]any{"name": a.Name, "prompt": a.Prompt, "schedule": a.Schedule, "tools": append([]string{}, a.Tools...)}
	if a.TimeZone != "" {
		canon["time_zone"] = a.TimeZone
	}
	if a.CatchUp != "" {
		canon["catch_up"] = a.CatchUp
	}
	return &call{canon: canon, run: func(context.Context) (string, error) { return approved, nil }}, nil
}

// RoundTableArgs are round_table's arguments.
type RoundTableArgs struct {
	Task         string   `json:"task"`
	Participants []string `json:"participants"`
	Constraints  []string `json:"constraints"`
}

// DecodeServiceArgs decodes a service tool's arguments strictly, as the
// gate does for OS tools (exact names, none unknown or repeated).
func DecodeServiceArgs(args json.RawMessage, v any) error { return decode(args, v) }

// approved is what the desktop's executor returns for a service tool: the
// gate allowed it, and the service runs it.
const approved = "approved: the service runs it"

func (e *Executor) prepareAgentsMessage(args json.RawMessage) (*call, error) {
	var a AgentsMessageArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.AgentID == "" || a.Content == "" {
		return nil, fmt.Errorf("%w: agentId and content are required", ErrBadArguments)
	}
	canon := map[string]any{"agentId": a.AgentID, "content": a.Content}
	if a.Session != "" {
		canon["session"] = a.Session
	}
	if a.Mode != "" {
		canon["mode"] = a.Mode
	}
	if a.Timeout != nil {
		canon["timeout"] = *a.Timeout
	}
	return &call{canon: canon, run: func(context.Context) (string, error) { return approved, nil }}, nil
}

func (e *Executor) prepareAgentPermission(args json.RawMessage) (*call, error) {
	var a AgentPermissionArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Agent == "" || a.Title == "" {
		return nil, fmt.Errorf("%w: agent and title are required", ErrBadArguments)
	}
	canon := map[string]any{"agent": a.Agent, "title": a.Title}
	if a.Kind != "" {
		canon["kind"] = a.Kind
	}
	if len(a.Input) > 0 {
		canon["input"] = a.Input
	}
	if len(a.Locations) > 0 {
		canon["locations"] = a.Locations
	}
	return &call{canon: canon, run: func(context.Context) (string, error) { return approved, nil }}, nil
}

func (e *Executor) prepareRoundTable(args json.RawMessage) (*call, error) {
	var a RoundTableArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Task == "" {
		return nil, fmt.Errorf("%w: task is required", ErrBadArguments)
	}
	canon := map[string]any{"task": a.Task}
	if len(a.Participants) > 0 {
		canon["participants"] = a.Participants
	}
	if len(a.Constraints) > 0 {
		canon["constraints"] = a.Constraints
	}
	return &call{canon: canon, run: func(context.Context) (string, error) { return approved, nil }}, nil
}
