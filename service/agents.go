package service

import (
	"errors"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/llm"
)

// agentInfo describes an agent for GET /v1/agents.
func (s *Service) agentInfo(a config.Agent) api.AgentInfo {
	info := api.AgentInfo{AgentID: a.AgentID, DisplayName: a.DisplayName, Description: a.Description, Type: a.Type,
		Status: api.AgentStatus{State: "unknown"}}
	if a.Type == config.TypeProxy {
		s.proxyAgentInfo(a, &info)
	}
	if a.Type == config.TypeRoundtable {
		info.Status = s.rtAgentStatus(a) // roundtable_api.go
	}
	if a.Type == config.TypeExternal {
		info.Status = s.externalAgentStatus(a)
	}
	if a.Type == config.TypeChat {
		ch := s.cfg().ResolvedChat(a)
		info.Provider, info.Model = ch.Provider, ch.Model
		if isCLIProvider(ch.Provider) {
			info.Status = s.cliStatus(a, ch)
		} else if _, _, err := s.providerFor(a); err != nil {
			var le *llm.Error
			if errors.As(err, &le) && le.Code == llm.CodeNotConfigured {
				info.Status = api.AgentStatus{State: "unconfigured", Detail: le.Message}
			}
		} else {
			info.Status = api.AgentStatus{State: "ok"}
		}
	}
	info.Status.Detail = s.red.String(info.Status.Detail) // a failed call's error may quote the agent
	return info
}
