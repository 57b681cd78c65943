package service

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/chatrt"
	"jarvis/service/events"
	"jarvis/service/httpapi"
	"jarvis/service/idempotency"
	"jarvis/service/llm"
	"jarvis/service/provenance"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// handleChat is POST /v1/chat.
func (s *Service) handleChat(w http.ResponseWriter, r *http.Request) error {
	var req api.ChatRequest
	if err := httpapi.DecodeJSON(w, r, &req, max(s.cfg().MaxBodyBytes, chatrt.MaxChatBody)); err != nil { // attachments: service/chatrt/attach.go
		return err
	}
	if req.GeneralSessionID == "" {
		return httpapi.Missing("general_session_id")
	}
	if len(req.Message.Parts) == 0 {
		return httpapi.Missing("message.parts")
	}
	text, images, err := chatrt.MessageParts(req.Message.Parts)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return httpapi.Errorf(http.StatusBadRequest, "empty_message", "the message has no text").With("field", "message.parts")
	}
	key, err := idempotency.Key(r)
	if err != nil {
		return err
	}
	sess, err := s.liveSession(r.Context(), req.GeneralSessionID, "general_session_id")
	if err != nil {
		return err
	}
	if err := s.exposedSession(sess.AgentID); err != nil {
		return err
	}
	var slot *idempotency.Slot
	if key != "" {
		sl, first := s.replays.Claim(sess.ID, "chat", key, text, s.now())
		if !first { // a replay: the first request's turn, never a second one
			if err := sl.Await(r, text); err != nil {
				return err
			}
			return s.answerTurn(w, r, sl.Turn, nil, req.Stream)
		}
		slot = sl
	}
	meta := provenance.Meta(chatrt.ImagesMeta(images), chatrt.AttachmentSources(text, images)...)
	t, run, err := s.prepareTurn(r.Context(), sess, text, meta, req.ReplacesTurnID, nil)
	if slot != nil {
		slot.Settle(t, err)
	}
	if err != nil {
		return err
	}
	return s.answerTurn(w, r, t, run, req.Stream)
}

// answerTurn answers POST /v1/chat with turn t: its events from the user's
// message to its end (stream), or its reply. run, when not nil, runs the
// turn; nil means another request started it (a replayed Idempotency-Key).
func (s *Service) answerTurn(w http.ResponseWriter, r *http.Request, t *turn.Turn, run func(), stream bool) error {
	if stream {
		if run != nil {
			t.Streamed = true
			go run()
		}
		seq, err := t.Stored()
		if err != nil {
			return err
		}
		// Follow the session from the user's message (included, as on the
		// session stream) until this turn ends.
		return s.streamEvents(w, r, t.SessionID, seq-1, func(ev events.Event) bool {
			return (ev.Type == api.EventFinal || ev.Type == api.EventError) && turnOf(ev.Data) == t.ID
		})
	}
	if run != nil {
		// The handler runs the turn itself; a client that disconnects
		// meanwhile does not stop it (its context is the turn's own), and its
		// events stay on the session stream.
		run()
	} else {
		select {
		case <-t.Done:
		case <-r.Context().Done():
			return nil
		}
	}
	if _, err := t.Stored(); err != nil {
		return err
	}
	if r.Context().Err() != nil {
		return nil
	}
	if t.Fail != nil {
		return httpapi.Errorf(statusForCode(t.Fail.Code), t.Fail.Code, "%s", t.Fail.Message).With("turn_id", t.ID)
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.ChatResponse{Assistant: api.Message{Parts: []api.MessagePart{{Type: "text", Text: t.Final}}}, TurnID: t.ID})
}

// statusForCode maps a turn's error code to the HTTP status of a non-streamed chat.
func statusForCode(code string) int {
	switch code {
	case llm.CodeNotConfigured, "cli_not_installed":
		return http.StatusServiceUnavailable
	case llm.CodeTimeout, "proxy_timeout", "a2a_timeout":
		return http.StatusGatewayTimeout
	case "cancelled", "interrupted", "run_waiting":
		return http.StatusConflict
	case "internal", "unknown_agent":
		return http.StatusInternalServerError
	}
	return http.StatusBadGateway // the model server failed
}

func turnOf(data json.RawMessage) string {
	var v struct {
		TurnID string `json:"turn_id"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "" // not an object: the event names no turn
	}
	return v.TurnID
}

// handleCancel is POST /v1/chat/cancel: it stops the session's running turn,
// its upstream call and any tool wait; the stream says so with an error
// event of code "cancelled".
func (s *Service) handleCancel(w http.ResponseWriter, r *http.Request) error {
	var req api.CancelRequest
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	if _, err := s.liveSession(r.Context(), req.GeneralSessionID, "general_session_id"); err != nil {
		return err
	}
	t := s.running(req.GeneralSessionID)
	if t == nil {
		return httpapi.WriteJSON(w, http.StatusOK, api.CancelResponse{Cancelled: false})
	}
	t.Cancel(errCancelledByUser)
	select {
	case <-t.Done:
	case <-time.After(5 * time.Second):
	case <-r.Context().Done():
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.CancelResponse{Cancelled: true, TurnID: t.ID})
}

// handleToolResult is POST /v1/tools/result.
func (s *Service) handleToolResult(w http.ResponseWriter, r *http.Request) error {
	var req api.ToolResultRequest
	if err := httpapi.DecodeJSON(w, r, &req, max(s.cfg().MaxBodyBytes, chatrt.MaxChatBody)); err != nil { // a tool's images and audio, as a message's attachments
		return err
	}
	if req.ToolResult.ID == "" {
		return httpapi.Missing("tool_result.id")
	}
	key, err := idempotency.Key(r)
	if err != nil {
		return err
	}
	if _, err := s.liveSession(r.Context(), req.GeneralSessionID, "general_session_id"); err != nil {
		return err
	}
	var slot *idempotency.Slot
	if key != "" {
		sl, first := s.replays.Claim(req.GeneralSessionID, "tool_result", key, req.ToolResult.ID, s.now())
		if !first { // a replay: the first request's answer, never a second result
			if err := sl.Await(r, req.ToolResult.ID); err != nil {
				return err
			}
			return httpapi.WriteJSON(w, http.StatusOK, api.ToolResultResponse{Accepted: true})
		}
		slot = sl
	}
	err = s.waiter.Deliver(r.Context(), req.GeneralSessionID, s.redactResult(req.ToolResult))
	if slot != nil {
		slot.Settle(nil, err)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.ToolResultResponse{Accepted: true})
}

// handleStream is GET /v1/stream?general_session_id=ID, the session's event
// stream. With Last-Event-ID (header, or last_event_id in the query for
// clients that cannot set headers) it first replays what the client missed.
func (s *Service) handleStream(w http.ResponseWriter, r *http.Request) error {
	sid := r.URL.Query().Get("general_session_id")
	sess, err := s.liveSession(r.Context(), sid, "general_session_id")
	if err != nil {
		return err
	}
	latest, err := s.hub.LastSeq(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID = r.URL.Query().Get("last_event_id")
	}
	after := latest
	var reset *api.ResetEvent
	if lastID != "" {
		n, err := strconv.ParseInt(lastID, 10, 64)
		if err != nil || n < 0 || n > latest {
			reset = &api.ResetEvent{Reason: "unknown_last_event_id", LastEventID: lastID, LatestID: latest}
		} else if horizon, err := s.st.ReplayHorizon(r.Context(), sess.ID); err != nil {
			return err
		} else if n < horizon {
			// The events after n are past the replay window and gone.
			reset = &api.ResetEvent{Reason: "expired_last_event_id", LastEventID: lastID, LatestID: latest}
		} else {
			after = n
		}
	}
	return s.streamEvents(w, r, sess.ID, after, func(events.Event) bool { return false }, reset)
}

// streamEvents writes a session's events after seq as SSE until the request
// ends, the service shuts down, or last(ev) says ev was the final one.
func (s *Service) streamEvents(w http.ResponseWriter, r *http.Request, sessionID string, after int64, last func(events.Event) bool, reset ...*api.ResetEvent) error {
	o := httpapi.Stream{Hub: s.hub, SessionID: sessionID, After: after, Last: last, Closing: s.closing, HeartbeatEvery: s.hbEvery, Log: s.log}
	if len(reset) > 0 {
		o.Reset = reset[0]
	}
	return o.Serve(w, r)
}

// handleAgentSession is POST /v1/agents/{agentId}/session, docs/protocols/agents.md's
// default routing: the agent's most recently updated non-deleted session
// (200), or a new one (201).
func (s *Service) handleAgentSession(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agentId")
	a, ok := s.cfg().Agent(id)
	if !ok {
		return httpapi.Errorf(http.StatusNotFound, "unknown_agent", "no agent %q is configured", id).With("field", "agentId")
	}
	if err := s.exposed(a); err != nil {
		return err
	}
	sess, created, err := s.chat.ResolveAgentSession(r.Context(), a, "latest-or-create")
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return httpapi.WriteJSON(w, status, api.AgentSessionResponse{Session: summary(sess), Created: created})
}

// contextInfo is a chat session's context use for GET /v1/sessions/{id}.
func (s *Service) contextInfo(ctx context.Context, sess store.Session) *api.ContextInfo {
	return s.chat.ContextInfo(ctx, sess)
}
