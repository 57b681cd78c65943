package service

import (
	"bytes"
	"encoding/json"
	"sync"

	"jarvis/service/config"
)

// parsedSettings holds one agent type's settings (an agent's "external" or
// "proxy" object), decoded and validated once per distinct bytes: when a
// configuration is loaded or reloaded (SetConfig parses every agent of the
// new one), and for an agent of an older configuration a running turn still
// holds. Safe for concurrent use.
type parsedSettings[T any] struct {
	raw   func(config.Agent) json.RawMessage
	parse func(config.Agent) (T, error)
	m     sync.Map // agent id → *parsedEntry[T]
}

type parsedEntry[T any] struct {
	raw json.RawMessage
	v   T
	err error
}

// get returns the agent's settings, parsing them only when their bytes
// are not the ones parsed last.
func (p *parsedSettings[T]) get(a config.Agent) (T, error) {
	raw := p.raw(a)
	if v, ok := p.m.Load(a.AgentID); ok {
		if e := v.(*parsedEntry[T]); bytes.Equal(e.raw, raw) {
			return e.v, e.err
		}
	}
	v, err := p.parse(a)
	p.m.Store(a.AgentID, &parsedEntry[T]{raw: raw, v: v, err: err})
	return v, err
}

// parseSettings parses and validates the settings of every external and
// proxy agent of c, once, when c is loaded or reloaded, and logs those that
// cannot run and those that accept unauthenticated callbacks.
func (s *Service) parseSettings(c *config.Config) {
	for _, a := range c.Agents {
		switch a.Type { // the settings objects are per type, as in config.json
		case config.TypeExternal:
			x, err := s.externalSettings(a)
			if err != nil {
				s.log.Warn("external agent is not usable", "agent", a.AgentID, "err", err)
			} else if x.CallbackAuth == externalAuthNone {
				s.log.Warn("external agent accepts unauthenticated callbacks (callbackAuth \"none\"): anything that can reach the service can post as this agent", "agent", a.AgentID)
			}
		case config.TypeProxy:
			pc, err := s.px.definition(a)
			if err != nil {
				s.log.Warn("proxy agent cannot run until its definition is fixed", "agent", a.AgentID, "err", err)
			} else if pc.CallbackAuth == "none" {
				s.log.Warn("proxy agent accepts unauthenticated callbacks (callbackAuth: none)", "agent", a.AgentID)
			}
		}
	}
}
