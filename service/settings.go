package service

import (
	"jarvis/service/config"
	"jarvis/service/turn"
)

// parseSettings has every agent's runtime parse and validate the agent's
// settings once, when c is loaded or reloaded (turn.Loader): the runtimes
// log the agents that cannot run and those that accept unauthenticated
// callbacks.
func (s *Service) parseSettings(c *config.Config) {
	for _, a := range c.Agents {
		if rt, ok := s.runtimes.For(c, a); ok {
			if l, ok := rt.(turn.Loader); ok {
				l.Load(a)
			}
		}
	}
}
