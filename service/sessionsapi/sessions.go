package sessionsapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/store"
)

// List is GET /v1/sessions[?agentId=&limit=&cursor=].
//
// limit (1–500, default 500) makes it a page; a page that may have more
// after it says where the next one starts (nextCursor, passed back as
// cursor): the last session's updated_at and id, so that a page costs the
// same however deep it is.
func (a *API) List(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	limit := 500
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "limit must be an integer from 1 to 500").With("field", "limit")
		}
		limit = n
	}
	var after *store.Session
	if c := v.Get("cursor"); c != "" {
		at, id, ok := strings.Cut(c, " ")
		if !ok || at == "" || id == "" {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "cursor is not one this list gave (pass nextCursor back as it is)").With("field", "cursor")
		}
		after = &store.Session{UpdatedAt: at, ID: id}
	}
	rows, err := a.Store.ListSessionsAfter(r.Context(), v.Get("agentId"), limit, after)
	if err != nil {
		return err
	}
	out := api.SessionList{Sessions: []api.SessionSummary{}}
	for _, row := range rows {
		out.Sessions = append(out.Sessions, Summary(row))
	}
	if len(rows) == limit {
		last := rows[len(rows)-1]
		out.NextCursor = last.UpdatedAt + " " + last.ID
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// Get is GET /v1/sessions/{id}.
func (a *API) Get(w http.ResponseWriter, r *http.Request) error {
	sess, err := httpapi.LiveSession(r.Context(), a.Store, r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	out := api.SessionDetail{SessionSummary: Summary(sess)}
	if a.ContextInfo != nil {
		out.Context = a.ContextInfo(r.Context(), sess)
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// Messages is GET /v1/sessions/{id}/messages: the transcript.
func (a *API) Messages(w http.ResponseWriter, r *http.Request) error {
	sess, err := httpapi.LiveSession(r.Context(), a.Store, r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	rows, err := a.Store.Messages(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	last, err := a.Hub.LastSeq(r.Context(), sess.ID)
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
	vs, err := a.Store.ShownVersions(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	for _, v := range vs {
		out.Versions = append(out.Versions, api.TurnVersions{Shown: v.Shown, Turns: v.Turns})
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// ShowVersion is POST /v1/sessions/{id}/versions: the conversation shows
// (and sends its model) the branch through another version of a turn.
func (a *API) ShowVersion(w http.ResponseWriter, r *http.Request) error {
	sess, err := a.idle(r)
	if err != nil {
		return err
	}
	var req api.ShowVersionRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.maxBody()); err != nil {
		return err
	}
	if req.TurnID == "" {
		return httpapi.Missing("turnId")
	}
	if err := a.Store.ShowVersion(r.Context(), sess.ID, req.TurnID); err != nil {
		return err
	}
	return a.changed(w, r, sess.ID, "branched")
}

// Update is PATCH /v1/sessions/{id}: rename, pin, attributes.
func (a *API) Update(w http.ResponseWriter, r *http.Request) error {
	sess, err := httpapi.LiveSession(r.Context(), a.Store, r.PathValue("id"), "id")
	if err != nil {
		return err
	}
	var req api.UpdateSessionRequest
	if err := httpapi.DecodeJSON(w, r, &req, a.maxBody()); err != nil {
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
		s := string(req.Attributes)
		attrs = &s
	}
	if req.Pinned != nil {
		p := ""
		if *req.Pinned {
			p = store.Timestamp(a.Now())
		}
		pinned = &p
	}
	if err := a.Store.UpdateSession(r.Context(), sess.ID, req.Name, attrs, pinned); err != nil {
		return err
	}
	return a.changed(w, r, sess.ID, "updated")
}

// Clear is POST /v1/sessions/{id}/clear: the history goes, the identity stays.
func (a *API) Clear(w http.ResponseWriter, r *http.Request) error {
	sess, err := a.idle(r)
	if err != nil {
		return err
	}
	if err := a.Store.ClearSession(r.Context(), sess.ID); err != nil {
		return err
	}
	a.forget(sess.ID)
	return a.changed(w, r, sess.ID, "cleared")
}

// Delete is DELETE /v1/sessions/{id}.
func (a *API) Delete(w http.ResponseWriter, r *http.Request) error {
	sess, err := a.idle(r)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteSession(r.Context(), sess.ID); err != nil {
		return err
	}
	a.forget(sess.ID)
	a.publish(sess.ID, api.SessionEvent{Change: "deleted", Session: Summary(sess)})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// changed reads a session back after a change, publishes the change and
// answers with the session.
func (a *API) changed(w http.ResponseWriter, r *http.Request, id, change string) error {
	sess, err := a.Store.Session(r.Context(), id)
	if err != nil {
		return err
	}
	a.publish(sess.ID, api.SessionEvent{Change: change, Session: Summary(sess)})
	return httpapi.WriteJSON(w, http.StatusOK, Summary(sess))
}

// idle returns the request's live session when no turn runs in it, else
// 409 turn_in_progress.
func (a *API) idle(r *http.Request) (store.Session, error) {
	sess, err := httpapi.LiveSession(r.Context(), a.Store, r.PathValue("id"), "id")
	if err == nil && a.Running != nil && a.Running(sess.ID) {
		err = httpapi.Errorf(http.StatusConflict, "turn_in_progress", "session %s is answering a message; cancel it first", sess.ID)
	}
	return sess, err
}

func (a *API) forget(sessionID string) {
	if a.Forget != nil {
		a.Forget(sessionID)
	}
}

// Agents is GET /v1/agents: the agents built-in clients show.
func (a *API) Agents(w http.ResponseWriter, r *http.Request) error {
	out := api.AgentList{Agents: []api.AgentInfo{}}
	for _, ag := range a.Config().Agents {
		if !ag.Visible() {
			continue
		}
		out.Agents = append(out.Agents, a.AgentInfo(ag))
	}
	if a.Warning != nil {
		out.Warning = a.Warning()
	}
	if a.Pending != nil {
		out.PendingConfig = a.Pending()
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}
