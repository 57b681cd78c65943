package service

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/store"
)

func summary(s store.Session) api.SessionSummary {
	out := api.SessionSummary{SessionID: s.ID, AgentID: s.AgentID, Name: s.Name, PinnedAt: s.PinnedAt,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, LastSnippet: s.LastSnippet}
	if s.Attributes != "" && s.Attributes != "{}" {
		out.Attributes = json.RawMessage(s.Attributes)
	}
	return out
}

// handleListSessions is GET /v1/sessions[?agentId=].
func (s *Service) handleListSessions(w http.ResponseWriter, r *http.Request) error {
	rows, err := s.st.ListSessions(r.Context(), r.URL.Query().Get("agentId"), 0)
	if err != nil {
		return err
	}
	out := api.SessionList{Sessions: []api.SessionSummary{}}
	for _, row := range rows {
		out.Sessions = append(out.Sessions, summary(row))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleGetSession is GET /v1/sessions/{id}.
func (s *Service) handleGetSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.liveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, api.SessionDetail{SessionSummary: summary(sess), Context: s.contextInfo(r.Context(), sess)})
}

// handleMessages is GET /v1/sessions/{id}/messages: the transcript.
func (s *Service) handleMessages(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.liveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	rows, err := s.st.Messages(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	last, err := s.hub.LastSeq(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	out := api.Transcript{Messages: []api.TranscriptMessage{}, LastEventID: last}
	for _, m := range rows {
		tm := api.TranscriptMessage{ID: m.ID, Role: m.Role, Text: m.Content, ToolCallID: m.ToolCallID, TurnID: m.TurnID, CreatedAt: m.CreatedAt}
		if m.ToolCalls != "" {
			tm.ToolCalls = json.RawMessage(m.ToolCalls)
		}
		if m.Meta != "" {
			tm.Meta = json.RawMessage(m.Meta)
		}
		out.Messages = append(out.Messages, tm)
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleUpdateSession is PATCH /v1/sessions/{id}: rename, pin, attributes.
func (s *Service) handleUpdateSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.liveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	var req api.UpdateSessionRequest
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	var attrs, pinned *string
	if req.Name != nil {
		n := strings.TrimSpace(*req.Name)
		if utf8.RuneCountInString(n) > 200 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "name is longer than 200 characters").With("field", "name")
		}
		req.Name = &n
	}
	if req.Attributes != nil {
		var obj map[string]any
		if json.Unmarshal(req.Attributes, &obj) != nil || obj == nil {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "attributes must be a JSON object").With("field", "attributes")
		}
		a := string(req.Attributes)
		attrs = &a
	}
	if req.Pinned != nil {
		p := ""
		if *req.Pinned {
			p = store.Timestamp(s.now())
		}
		pinned = &p
	}
	if err := s.st.UpdateSession(r.Context(), sess.ID, req.Name, attrs, pinned); err != nil {
		return err
	}
	sess, err = s.st.Session(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	s.publish(sess.ID, api.EventSession, api.SessionEvent{Change: "updated", Session: summary(sess)})
	return httpapi.WriteJSON(w, http.StatusOK, summary(sess))
}

// handleClearSession is POST /v1/sessions/{id}/clear: the history goes, the identity stays.
func (s *Service) handleClearSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.liveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	if err := s.refuseWhileRunning(sess.ID); err != nil {
		return err
	}
	if err := s.st.ClearSession(r.Context(), sess.ID); err != nil {
		return err
	}
	s.dropACP(sess.ID) // its agent's conversation goes too (service/acprt)
	sess, err = s.st.Session(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	s.publish(sess.ID, api.EventSession, api.SessionEvent{Change: "cleared", Session: summary(sess)})
	return httpapi.WriteJSON(w, http.StatusOK, summary(sess))
}

// handleDeleteSession is DELETE /v1/sessions/{id}.
func (s *Service) handleDeleteSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.liveSession(r.Context(), r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	if err := s.refuseWhileRunning(sess.ID); err != nil {
		return err
	}
	if err := s.st.DeleteSession(r.Context(), sess.ID); err != nil {
		return err
	}
	s.dropACP(sess.ID) // service/acprt
	s.publish(sess.ID, api.EventSession, api.SessionEvent{Change: "deleted", Session: summary(sess)})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) refuseWhileRunning(sessionID string) error {
	s.mu.Lock()
	t := s.turns[sessionID]
	s.mu.Unlock()
	if t != nil {
		return httpapi.Errorf(http.StatusConflict, "turn_in_progress", "session %s is answering a message; cancel it first", sessionID)
	}
	return nil
}

// handleAgents is GET /v1/agents: the agents built-in clients show.
func (s *Service) handleAgents(w http.ResponseWriter, r *http.Request) error {
	out := api.AgentList{Agents: []api.AgentInfo{}}
	for _, a := range s.cfg().Agents {
		if !a.Visible() {
			continue
		}
		out.Agents = append(out.Agents, s.agentInfo(a))
	}
	out.Warning = s.configWarning()
	return httpapi.WriteJSON(w, http.StatusOK, out)
}
