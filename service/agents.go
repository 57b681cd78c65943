package service

import (
	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/turn"
)

// agentInfo describes an agent for GET /v1/agents: its runtime says its
// status and adds its own details.
func (s *Service) agentInfo(a config.Agent) api.AgentInfo {
	info := api.AgentInfo{AgentID: a.AgentID, DisplayName: a.DisplayName, Description: a.Description, Type: a.Type,
		Status: api.AgentStatus{State: "unknown"}}
	if rt, ok := s.runtimes.For(s.cfg(), a); ok {
		info.Status = rt.Status(a)
		if d, ok := rt.(turn.Describer); ok {
			d.Describe(a, &info)
		}
	}
	info.Status.Detail = s.red.String(info.Status.Detail) // a failed call's error may quote the agent
	return info
}
