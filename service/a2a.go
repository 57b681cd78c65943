package service

// The A2A server's side in the service (package a2aserver): the agents it
// offers and a turn run for an A2A message, through the same turn
// lifecycle as POST /v1/chat.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"jarvis/api"
	"jarvis/service/a2aserver"
	"jarvis/service/events"
	"jarvis/service/store"
)

// a2aContexts maps A2A context ids to the Jarvis sessions their turns run
// in (kept while the service runs; a context id that is a Jarvis session's
// own id is that session).
type a2aContexts struct {
	mu   sync.Mutex
	sess map[string]string
}

func (s *Service) a2aServer() *a2aserver.Server {
	return a2aserver.New(a2aserver.Turns{Agents: s.a2aAgents, Run: s.a2aRun}, Version,
		func() int64 { return s.cfg().MaxBodyBytes }, s.log)
}

// a2aAgents are the agents open to API clients: apiExposed not false.
func (s *Service) a2aAgents() []a2aserver.Agent {
	var out []a2aserver.Agent
	for _, a := range s.cfg().Agents {
		if a.APIExposed == nil || *a.APIExposed {
			out = append(out, a2aserver.Agent{ID: a.AgentID, Name: a.DisplayName, Description: a.Description})
		}
	}
	return out
}

// a2aSession is the Jarvis session of an A2A context, created on its first message.
func (s *Service) a2aSession(ctx context.Context, agentID, contextID string) (store.Session, error) {
	s.a2aCtx.mu.Lock()
	defer s.a2aCtx.mu.Unlock()
	id := s.a2aCtx.sess[contextID]
	if id == "" {
		if sess, err := s.st.Session(ctx, contextID); err == nil && sess.DeletedAt == "" && sess.AgentID == agentID {
			id = contextID
		}
	}
	if id != "" {
		sess, err := s.st.Session(ctx, id)
		if err == nil && sess.DeletedAt == "" && sess.AgentID == agentID {
			return sess, nil
		}
		if err == nil && sess.AgentID != agentID {
			return store.Session{}, fmt.Errorf("this conversation is with agent %q, not %q: start a new one", sess.AgentID, agentID)
		}
	}
	sess, err := s.st.CreateSession(ctx, store.Session{ID: newID("g_"), AgentID: agentID})
	if err != nil {
		return store.Session{}, err
	}
	if s.a2aCtx.sess == nil {
		s.a2aCtx.sess = map[string]string{}
	}
	s.a2aCtx.sess[contextID] = sess.ID
	return sess, nil
}

// a2aRun runs one turn for an A2A message and follows its events until it
// ends: deltas to onDelta, the reply or the turn's error returned.
func (s *Service) a2aRun(ctx context.Context, agentID, contextID, text string, onDelta func(string)) (string, error) {
	a, ok := s.cfg().Agent(agentID)
	if !ok || (a.APIExposed != nil && !*a.APIExposed) {
		return "", fmt.Errorf("no agent %q is offered over A2A", agentID)
	}
	sess, err := s.a2aSession(ctx, agentID, contextID)
	if err != nil {
		return "", err
	}
	t, run, err := s.prepareTurn(ctx, sess, text, "", "", nil)
	if err != nil {
		return "", fmt.Errorf("the turn could not start: %w", err)
	}
	t.Streamed = true
	go run()
	seq, err := t.Stored()
	if err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { t.Cancel(errCancelledByUser) })
	defer stop()
	_ = s.hub.Follow(context.WithoutCancel(ctx), sess.ID, seq, events.FollowOptions{}, func(ev events.Event) error {
		switch ev.Type {
		case api.EventDelta:
			var te api.TextEvent
			if json.Unmarshal(ev.Data, &te) == nil && te.TurnID == t.ID && te.Text != "" {
				onDelta(te.Text)
			}
		case api.EventFinal, api.EventError:
			if turnOf(ev.Data) == t.ID {
				return events.ErrStop
			}
		}
		return nil
	})
	<-t.Done
	if t.Fail != nil {
		return "", errors.New(t.Fail.Message)
	}
	return t.Final, nil
}
