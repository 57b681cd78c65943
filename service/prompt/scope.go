package prompt

import (
	"path"
	"strings"

	"jarvis/service/config"
)

// matchGlob matches a docs/protocols/agents.md glob pattern ("reading_list_*", "lists.*").
func matchGlob(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func anyGlob(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchGlob(p, name) {
			return true
		}
	}
	return false
}

// ToolInScope is docs/protocols/agents.md's getEffectiveTools filter for one tool. It is a
// security boundary: applied when tools are offered and again when a call is
// executed, so a model cannot call a tool its agent does not have.
func ToolInScope(a config.Agent, name string, capabilities []string) bool {
	if a.ToolAllowlist == nil && a.ToolDenylist == nil && a.CapabilityAllowlist == nil && a.CapabilityDenylist == nil {
		return true
	}
	if strings.HasPrefix(name, "system_") {
		return true
	}
	if a.ToolAllowlist != nil && !anyGlob(a.ToolAllowlist, name) {
		return false
	}
	if a.ToolDenylist != nil && anyGlob(a.ToolDenylist, name) {
		return false
	}
	if len(capabilities) == 0 {
		return true
	}
	if a.CapabilityAllowlist != nil {
		for _, c := range capabilities {
			if !anyGlob(a.CapabilityAllowlist, c) {
				return false
			}
		}
	}
	if a.CapabilityDenylist != nil {
		for _, c := range capabilities {
			if anyGlob(a.CapabilityDenylist, c) {
				return false
			}
		}
	}
	return true
}
