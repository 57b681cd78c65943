package acprt

// The modes and models of an ACP agent's session, as the window's picker
// shows them: GET and PUT /v1/sessions/{id}/agent-choice. The user's choice
// is kept in the session's attributes ("acp": {"mode", "model"}), sent to
// the agent at once when its session is open, and to each new session of
// it (after a restart too); the session's file changes the agent reports
// are diff cards (status kind "diff"). Each diff card and each change of
// mode or model is also kept with the conversation as a status line
// (role "status", meta kind "diff" or "agent_choice"), so the transcript
// shows them after a reload or a restart of the service; the model is
// never sent status lines.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"jarvis/api"
	"jarvis/service/acpagent"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// maxDiffText is the most text a diff card carries (before and after
// together); a longer change is shown by its path alone.
const maxDiffText = 256 << 10

// Routes are the picker's routes and Jarvis's MCP endpoint (mcp.go).
func (rt *Runtime) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "GET /v1/sessions/{id}/agent-choice", Handle: rt.handleGetChoice},
		{Pattern: "PUT /v1/sessions/{id}/agent-choice", Handle: rt.handlePutChoice},
		{Pattern: "GET /v1/agents/{agentId}/sign-in", Handle: rt.handleGetSignIn},
		{Pattern: "PUT /v1/agents/{agentId}/sign-in", Handle: rt.handlePutSignIn},
		{Pattern: "POST " + MCPPath, Handle: rt.handleMCP},
		{Pattern: "GET " + MCPPath, Handle: rt.handleMCP},
		{Pattern: "DELETE " + MCPPath, Handle: rt.handleMCP},
	}
}

// sessionAttrs is what the runtime keeps in a session's attributes.
type sessionAttrs struct {
	ACP struct {
		Mode  string `json:"mode,omitempty"`
		Model string `json:"model,omitempty"`
	} `json:"acp"`
}

// chosen is the mode and model kept with the session.
func chosen(sess store.Session) (mode, model string) {
	var a sessionAttrs
	_ = json.Unmarshal([]byte(sess.Attributes), &a) // not ours: none chosen
	return a.ACP.Mode, a.ACP.Model
}

// acpSession is the live session id names, refused unless its agent is an ACP agent.
func (rt *Runtime) acpSession(r *http.Request) (store.Session, error) {
	sess, err := httpapi.LiveSession(r.Context(), rt.env.Store, r.PathValue("id"), "id")
	if err != nil {
		return sess, err
	}
	c := rt.env.Config()
	a, ok := c.Agent(sess.AgentID)
	if !ok || turn.KindOf(c, a) != turn.KindACP {
		return sess, httpapi.Errorf(http.StatusConflict, "not_acp_agent", "the conversation's agent %q is not an ACP agent: it has no modes or models to choose", sess.AgentID).With("field", "id")
	}
	return sess, nil
}

// live is the session's running agent, or nil.
func (rt *Runtime) live(sessionID string) *acpagent.Agent {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if e := rt.bySess[sessionID]; e != nil {
		return e.a
	}
	return nil
}

// choicesOf is what the window gets: the live agent's choices, else the
// user's kept choice alone.
func (rt *Runtime) choicesOf(sess store.Session) api.AgentChoices {
	if a := rt.live(sess.ID); a != nil {
		if c := a.Choices(); !c.Empty() {
			return apiChoices(c)
		}
	}
	mode, model := chosen(sess)
	return api.AgentChoices{Mode: mode, Model: model}
}

func (rt *Runtime) handleGetChoice(w http.ResponseWriter, r *http.Request) error {
	sess, err := rt.acpSession(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, rt.choicesOf(sess))
}

// handlePutChoice keeps the user's choice with the session and sends it to
// the agent when its session is open (a mode or model it does not offer is
// refused, and nothing is kept).
func (rt *Runtime) handlePutChoice(w http.ResponseWriter, r *http.Request) error {
	sess, err := rt.acpSession(r)
	if err != nil {
		return err
	}
	var req api.AgentChoiceRequest
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	if req.Mode == "" && req.Model == "" {
		return httpapi.Errorf(http.StatusBadRequest, "missing_field", "choose a mode or a model").With("field", "mode")
	}
	before := rt.choicesOf(sess)
	if a := rt.live(sess.ID); a != nil {
		if _, err := a.Choose(context.WithoutCancel(r.Context()), req.Mode, req.Model); err != nil {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_choice", "%v", err).With("field", "mode")
		}
	}
	s, err := rt.keepChoice(context.WithoutCancel(r.Context()), sess, req.Mode, req.Model)
	if err != nil {
		return err
	}
	sess.Attributes = s
	after := rt.choicesOf(sess)
	name := sess.AgentID
	if a, ok := rt.env.Config().Agent(sess.AgentID); ok && a.DisplayName != "" {
		name = a.DisplayName
	}
	if line, ok := changeText(name, true, before, after); ok {
		rt.keepChange(sess.ID, "", line, choiceLine{Kind: "agent_choice", By: "user", Mode: after.Mode, Model: after.Model})
	}
	rt.choiceSeen(sess.ID, "", name, after, true)
	return httpapi.WriteJSON(w, http.StatusOK, after)
}

// keepChoice keeps mode and model ("" leaves one as it was) with the
// session's other attributes and returns them.
func (rt *Runtime) keepChoice(ctx context.Context, sess store.Session, mode, model string) (string, error) {
	attrs := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(sess.Attributes), &attrs) // an object (PATCH checks it) or empty
	keptMode, keptModel := chosen(sess)
	if mode != "" {
		keptMode = mode
	}
	if model != "" {
		keptModel = model
	}
	var kept sessionAttrs
	kept.ACP.Mode, kept.ACP.Model = keptMode, keptModel
	b, _ := json.Marshal(kept.ACP)
	attrs["acp"] = b
	out, _ := json.Marshal(attrs)
	s := string(out)
	return s, rt.env.Store.UpdateSession(ctx, sess.ID, nil, &s, nil)
}

// followAgent keeps the agent's own change of a kept mode or model: the
// next agent process (after a restart) is not sent the one it left.
func (rt *Runtime) followAgent(sessionID string, c api.AgentChoices) {
	ctx := context.Background()
	sess, err := rt.env.Store.Session(ctx, sessionID)
	if err != nil {
		return
	}
	mode, model := chosen(sess)
	if mode == "" || mode == c.Mode {
		c.Mode = ""
	}
	if model == "" || model == c.Model {
		c.Model = ""
	}
	if c.Mode == "" && c.Model == "" {
		return
	}
	if _, err := rt.keepChoice(ctx, sess, c.Mode, c.Model); err != nil {
		rt.env.Log.Error("acp: keep the agent's own mode", "session", sessionID, "err", err)
	}
}

// diffLine is the meta of a kept diff card.
type diffLine struct {
	Kind string        `json:"kind"` // "diff"
	Diff *api.FileDiff `json:"diff"`
}

// choiceLine is the meta of a kept change of mode or model.
type choiceLine struct {
	Kind  string `json:"kind"` // "agent_choice"
	By    string `json:"by"`   // "user" (the picker) or "agent" (it switched itself)
	Mode  string `json:"mode,omitempty"`
	Model string `json:"model,omitempty"`
}

// keep stores a status line with the conversation (under the turn, or
// between turns when turnID is ""). A failure is logged: the live window
// saw the line already.
func (rt *Runtime) keep(sessionID, turnID, text string, meta any) {
	b, _ := json.Marshal(meta)
	m := store.Message{SessionID: sessionID, TurnID: turnID, Role: "status", Content: text, Meta: string(b)}
	if red := rt.opts.Red; red != nil { // as every event is: a file's text may hold a secret Jarvis knows
		m.Content, m.Meta = red.String(m.Content), red.String(m.Meta)
	}
	if _, err := rt.env.Store.AddMessage(context.Background(), m); err != nil {
		rt.env.Log.Error("acp: keep a status line", "session", sessionID, "err", err)
	}
}

// keepChange keeps a change of mode or model and shows it in the open
// window at once (status kind "agent_choice").
func (rt *Runtime) keepChange(sessionID, turnID, text string, meta choiceLine) {
	rt.keep(sessionID, turnID, text, meta)
	rt.env.Publisher.Publish(sessionID, api.EventStatus, api.StatusEvent{Text: text, Kind: "agent_choice", TurnID: turnID})
}

// choiceSeen records the session's current mode and model. Seen during a
// turn (quiet false), a change from the ones known before is the agent's
// own (current_mode_update) and is kept as a line; the first ones a new
// agent process reports are not a change. The picker (quiet) keeps its
// own line and only records.
func (rt *Runtime) choiceSeen(sessionID, turnID, name string, c api.AgentChoices, quiet bool) {
	rt.mu.Lock()
	e := rt.bySess[sessionID]
	if e == nil {
		rt.mu.Unlock()
		return
	}
	before := api.AgentChoices{Mode: e.mode, Model: e.model, Modes: c.Modes, Models: c.Models}
	first := e.mode == "" && e.model == ""
	e.mode, e.model = c.Mode, c.Model
	rt.mu.Unlock()
	if quiet || first {
		return
	}
	if line, ok := changeText(name, false, before, c); ok {
		rt.keepChange(sessionID, turnID, line, choiceLine{Kind: "agent_choice", By: "agent", Mode: c.Mode, Model: c.Model})
		rt.followAgent(sessionID, c)
	}
}

// changeText says a change of mode or model in a line ("Coder: mode
// changed to Code by you"); ok false when neither changed.
func changeText(name string, byUser bool, before, after api.AgentChoices) (string, bool) {
	var parts []string
	if after.Mode != "" && after.Mode != before.Mode {
		parts = append(parts, "mode changed to "+choiceLabel(after.Modes, after.Mode))
	}
	if after.Model != "" && after.Model != before.Model {
		parts = append(parts, "model changed to "+choiceLabel(after.Models, after.Model))
	}
	if len(parts) == 0 {
		return "", false
	}
	who := " by the agent"
	if byUser {
		who = " by you"
	}
	return name + ": " + strings.Join(parts, ", ") + who, true
}

func choiceLabel(list []api.AgentChoice, id string) string {
	for _, c := range list {
		if c.ID == id && c.Name != "" {
			return c.Name
		}
	}
	return id
}

func apiChoices(c acpagent.Choices) api.AgentChoices {
	out := api.AgentChoices{Mode: c.Mode, Model: c.Model}
	for _, m := range c.Modes {
		out.Modes = append(out.Modes, api.AgentChoice(m))
	}
	for _, m := range c.Models {
		out.Models = append(out.Models, api.AgentChoice(m))
	}
	return out
}

// choicesText says the choices in a status line.
func choicesText(name string, c acpagent.Choices) string {
	s := name + ":"
	if c.Mode != "" {
		s += " mode " + label(c.Modes, c.Mode)
	}
	if c.Model != "" {
		if c.Mode != "" {
			s += ","
		}
		s += " model " + label(c.Models, c.Model)
	}
	return s
}

func label(list []acpagent.Choice, id string) string {
	for _, c := range list {
		if c.ID == id && c.Name != "" {
			return c.Name
		}
	}
	return id
}

// apiDiff is a diff card's data.
func apiDiff(d acpagent.Diff) *api.FileDiff {
	out := &api.FileDiff{ToolCallID: d.ToolCallID, Title: d.Title, Path: d.Path, Old: d.Old, New: d.New, Undo: "none"}
	if d.Checkpointed {
		out.Undo = "turn"
	}
	n := len(d.New)
	if d.Old != nil {
		n += len(*d.Old)
	}
	if n > maxDiffText {
		out.Old, out.New, out.Omitted = nil, "", true
	}
	return out
}

// diffText says a diff card in a status line.
func diffText(name string, d acpagent.Diff) string {
	verb := "changed "
	if d.Old == nil {
		verb = "created "
	}
	s := name + " " + verb + d.Path
	if d.Checkpointed {
		return s + " (through Jarvis: the turn's undo restores it)"
	}
	return s + " (itself: Jarvis has no copy of the file as it was, so it cannot undo this)"
}
