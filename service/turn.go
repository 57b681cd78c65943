package service

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/httpapi"
	"jarvis/service/provenance"
	"jarvis/service/store"
	"jarvis/service/tasks"
	"jarvis/service/turn"
)

var errCancelledByUser = errors.New("cancelled by the user")

// startTurnWith records the user's message and starts the agent's turn in
// the background; chain is the delegation chain that led to it (service/chatrt/delegate.go),
// nil for a user's message. It returns the turn and the seq of its
// user.message event: the turn's own events follow it.
func (s *Service) startTurnWith(ctx context.Context, sess store.Session, text string, chain []string, untrusted []api.Source) (*turn.Turn, int64, error) {
	t, run, err := s.prepareTurn(ctx, sess, text, provenance.Meta("", untrusted...), "", chain)
	if err != nil {
		return nil, 0, err
	}
	go run()
	seq, err := t.Stored()
	if err != nil {
		return nil, 0, err
	}
	return t, seq, nil
}

// prepareTurn claims the session for a new turn and returns the function
// that runs it, for a caller that runs it itself (a non-streamed chat's
// handler, which would only wait for it: running it there saves a hand-off).
// The turn, the user's message and its user.message event are stored in one
// transaction that prepareTurn only starts: a chat agent builds its prompt
// and calls its model meanwhile, and its first event or write waits for it
// (t.stored). The turn outlives the request that started it: it runs on its
// own context, which only POST /v1/chat/cancel and a shutdown cancel.
// replaces, when not "", is the id of the turn this one is a new version of
// (Regenerate, Retry, Edit: service/store/branches.go).
func (s *Service) prepareTurn(ctx context.Context, sess store.Session, text, meta, replaces string, chain []string) (*turn.Turn, func(), error) {
	select {
	case <-s.closing:
		return nil, nil, httpapi.Errorf(http.StatusServiceUnavailable, "shutting_down", "the service is shutting down")
	default:
	}
	tctx, cancel := context.WithCancelCause(context.Background())
	t := &turn.Turn{ID: newID("t_"), SessionID: sess.ID, Done: make(chan struct{}), Chain: chain, Cancel: cancel, Replaces: replaces,
		User: store.Message{SessionID: sess.ID, Role: "user", Content: text, Meta: meta}}
	return s.beginTurn(ctx, tctx, cancel, t, sess, api.EventUserMessage, api.TextEvent{Text: text, TurnID: t.ID},
		s.st.StartTurn(t.ID, replaces, &t.User, snippet(text)))
}

// beginTurn claims t's session, stores t's start (write, with its first
// event) and returns the function that runs t.
func (s *Service) beginTurn(ctx, tctx context.Context, cancel context.CancelCauseFunc, t *turn.Turn, sess store.Session, typ string, data any, write store.Write) (*turn.Turn, func(), error) {
	if err := s.claim(t); err != nil {
		cancel(nil)
		return nil, nil, err
	}
	wait, err := s.hub.Begin(ctx, sess.ID, typ, data, write)
	if err != nil {
		s.release(t)
		cancel(nil)
		return nil, nil, err
	}
	t.Stored = sync.OnceValues(func() (int64, error) {
		seq, err := wait()
		if errors.Is(err, store.ErrConflict) { // the store's own check, behind the claim above
			err = turnInProgress(sess.ID)
		}
		return seq, err
	})
	s.wg.Add(1)
	return t, func() {
		defer s.wg.Done()
		s.runTurn(tctx, t, sess)
	}, nil
}

func turnInProgress(sessionID string) error {
	return httpapi.Errorf(http.StatusConflict, "turn_in_progress", "session %s is already answering a message; wait for it or cancel it (POST /v1/chat/cancel)", sessionID)
}

// claim holds t's session for it: one turn (or compaction) at a time.
func (s *Service) claim(t *turn.Turn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns[t.SessionID] != nil {
		return turnInProgress(t.SessionID)
	}
	s.turns[t.SessionID] = t
	return nil
}

// running is the session's running turn, or nil.
func (s *Service) running(sessionID string) *turn.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[sessionID]
}

// release ends t's claim on its session.
func (s *Service) release(t *turn.Turn) {
	s.mu.Lock()
	if s.turns[t.SessionID] == t {
		delete(s.turns, t.SessionID)
	}
	s.mu.Unlock()
}

func snippet(text string) string { return turn.Snippet(text) }

func (s *Service) publish(sessionID, typ string, data any) {
	if err := s.hub.Publish(context.Background(), sessionID, typ, data); err != nil {
		s.log.Error("publish event", "session", sessionID, "type", typ, "err", err)
	}
}

// runtimeFunc runs one turn for an agent of one kind (chat, external, proxy,
// roundtable): it publishes the turn's events and returns how it ended;
// runTurn records the end and publishes the terminal event.
type runtimeFunc func(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome

// runTurn runs a turn on its agent's runtime and records how it ended.
func (s *Service) runTurn(ctx context.Context, t *turn.Turn, sess store.Session) {
	defer close(t.Done)
	var out turn.Outcome
	if agent, ok := s.cfg().Agent(sess.AgentID); !ok {
		out = turn.Failed("unknown_agent", "The session's agent %q is no longer configured.", sess.AgentID)
	} else {
		if t.Task != nil { // a task's run: only the task's tools (service/tasks)
			agent = tasks.Narrow(agent, t.Task.Tools)
		}
		out = s.runtimeFor(agent)(ctx, t, sess, agent)
	}
	if _, err := t.Stored(); err != nil {
		s.abandon(t, err)
		return
	}
	status := store.TurnDone
	if out.Fail != nil {
		status = store.TurnFailed
		switch cause := context.Cause(ctx); {
		case cause == nil:
		case errors.Is(cause, errShutdown) && t.Task != nil && s.waitsInInbox(context.WithoutCancel(ctx), t.Task.RunID):
			// A task's run whose call waits in the Inbox: it goes on from
			// there once allowed (resume.go), nothing to send again.
			status, out.Fail = store.TurnInterrupted, &api.ErrorEvent{Code: "run_waiting", Message: runWaitingMessage}
		case errors.Is(cause, errShutdown):
			status, out.Fail = store.TurnInterrupted, &api.ErrorEvent{Code: "interrupted", Message: store.InterruptedMessage}
		default:
			status, out.Fail = store.TurnCancelled, &api.ErrorEvent{Code: "cancelled", Message: "Stopped: the turn was cancelled."}
		}
	}
	s.finishTurn(t, status, out)
}

// abandon ends a turn whose start could not be stored: nothing of it is.
func (s *Service) abandon(t *turn.Turn, err error) {
	s.release(t)
	t.Fail = &api.ErrorEvent{Code: "internal", Message: err.Error(), TurnID: t.ID}
	var he *httpapi.Error
	if errors.As(err, &he) {
		t.Fail.Code, t.Fail.Message = he.Code, he.Msg
	}
}

// finishTurn records a turn's end and its terminal event in one transaction,
// with the last delta not yet published, if any.
func (s *Service) finishTurn(t *turn.Turn, status string, out turn.Outcome) {
	out = s.redactOutcome(out) // redact.go
	// An MCP server's sampling during the turn (POST /v1/sessions/{id}/sample).
	if u := t.TakeSampled(); u.Requests > 0 {
		t.Usage.Requests += u.Requests
		t.Usage.PromptTokens += u.PromptTokens
		t.Usage.CompletionTokens += u.CompletionTokens
	}
	code := ""
	typ, data := api.EventFinal, any(api.TextEvent{Text: out.Final, TurnID: t.ID, Kind: out.Kind})
	if out.Fail != nil {
		code = out.Fail.Code
		out.Fail.TurnID = t.ID
		t.Fail = out.Fail
		typ, data = api.EventError, *out.Fail
	} else {
		t.Final = out.Final
		if u := t.Usage; u.PromptTokens > 0 {
			data = api.TextEvent{Text: out.Final, TurnID: t.ID, Kind: out.Kind, Usage: &api.ReplyUsage{PromptTokens: u.PromptTokens,
				CompletionTokens: u.CompletionTokens, Requests: u.Requests, ContextTokens: u.ContextTokens, ContextWindow: t.Window}}
		}
	}
	var lead []events.Draft
	if out.Tail != "" {
		lead = append(lead, events.Draft{Type: api.EventDelta, Data: api.TextEvent{Text: out.Tail, TurnID: t.ID}})
	}
	// The session takes its next message once this end is stored (a turn
	// started earlier would not see this turn's last message), and before
	// the terminal event reaches anyone (a client that sees it can send its
	// next message at once).
	write := s.st.FinishTurn(t.ID, t.SessionID, status, code, out.Last, snippet(out.Final))
	if out.Fail != nil && (out.Last == nil || out.Last.Role != "status") {
		// How the turn ended stays in the transcript ("Stopped.", the
		// error), after what it answered before it ended (unless its
		// runtime stored its own line).
		write = write.Then(s.st.AppendMessage(&store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "status",
			Content: out.Fail.Message, Meta: store.EndLineMeta(code)}))
	}
	if status != store.TurnDone {
		// The last measure does not cover what the turn stored after its
		// last request: the next turn estimates it.
		t.Usage.ContextTokens = 0
	}
	if t.Usage.Requests > 0 {
		write = write.Then(s.st.RecordUsage(t.ID, t.SessionID, t.Usage))
	}
	if _, err := s.hub.PublishAfter(context.Background(), t.SessionID, lead, typ, data, write, func() { s.release(t) }); err != nil {
		s.release(t)
		s.log.Error("finish turn", "session", t.SessionID, "turn", t.ID, "err", err)
	}
}
