package service

// The routes no runtime owns are served by service/sessionsapi (sessions,
// search across them, the agent list) and service/providersapi (first-run
// setup and Test connection); here they get their dependencies as fields,
// never the service. The methods below keep the names the runtimes' wiring
// (runtimes.go) and the chat handlers call.

import (
	"context"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/providersapi"
	"jarvis/service/sessionsapi"
	"jarvis/service/store"
)

func (s *Service) sessionsAPI() *sessionsapi.API {
	return &sessionsapi.API{Store: s.st, Hub: s.hub, Config: s.cfg, Now: s.now, Log: s.log,
		Exposed: s.exposed, Running: s.turnRunning, Forget: s.dropACP, // an ACP agent's conversation ends with its session's history
		ContextInfo: s.contextInfo, AgentInfo: s.agentInfo, Warning: s.configWarning, Pending: s.pendingConf.Load}
}

// providersAPI is built once (routes): it serialises rewrites of the config file.
func (s *Service) providersAPI() *providersapi.API {
	return &providersapi.API{Config: s.cfg, ConfigPath: s.configPath, SetConfig: s.SetConfig, Reload: s.ReloadConfig, Approved: s.approved, ApprovalName: ConfigApproval,
		Keys: s.secretKeys(), HTTPClient: s.hc, Problem: func() error {
			a, err := s.agentForNewSession("")
			if err == nil {
				_, _, err = s.providerFor(a)
			}
			return err
		}}
}

// turnRunning says whether a turn is running in the session.
func (s *Service) turnRunning(sessionID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[sessionID] != nil
}

func (s *Service) secretKeys() providersapi.Keys {
	return providersapi.Keys{Secrets: s.rawSecrets, Red: s.red}
}

// putSecret stores value under ref and says where it went.
func (s *Service) putSecret(ref, value string) (string, error) { return s.secretKeys().Put(ref, value) }

func (s *Service) deleteSecret(ref string) error { return s.secretKeys().Delete(ref) }

// agentForNewSession returns the named agent, or the default one.
func (s *Service) agentForNewSession(id string) (config.Agent, error) {
	return sessionsapi.AgentFor(s.cfg(), id)
}

// liveSession returns a session that exists and is not deleted, or a 404.
func (s *Service) liveSession(ctx context.Context, id, field string) (store.Session, error) {
	return httpapi.LiveSession(ctx, s.st, id, field)
}

func summary(sess store.Session) api.SessionSummary { return sessionsapi.Summary(sess) }

// ValidateSessionID checks a user-provided session id (sessionsapi.ValidateSessionID).
func ValidateSessionID(id string) (string, error) { return sessionsapi.ValidateSessionID(id) }
