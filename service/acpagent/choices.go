package acpagent

// The session modes and models an ACP agent offers (session/new's and
// session/load's `modes` and `models`), the ones in use, and the user's
// choice: sent with session/set_mode and session/set_model as soon as the
// agent's session is open, and again to a new session of the agent.

import (
	"context"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Choice is one mode or model the agent offers.
type Choice struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Choices are the modes and models the agent's session offers and the
// current ones; empty when it offers none.
type Choices struct {
	Modes  []Choice `json:"modes,omitempty"`
	Mode   string   `json:"mode,omitempty"`
	Models []Choice `json:"models,omitempty"`
	Model  string   `json:"model,omitempty"`
}

// Empty reports an agent that offers neither modes nor models.
func (c Choices) Empty() bool { return len(c.Modes) == 0 && len(c.Models) == 0 }

func (c Choices) copy() Choices {
	c.Modes = append([]Choice(nil), c.Modes...)
	c.Models = append([]Choice(nil), c.Models...)
	return c
}

// choicesOf reads a session's modes and models.
func choicesOf(modes *acp.SessionModeState, models *acp.SessionModelState) Choices {
	var c Choices
	if modes != nil {
		c.Mode = string(modes.CurrentModeId)
		for _, m := range modes.AvailableModes {
			ch := Choice{ID: string(m.Id), Name: m.Name}
			if m.Description != nil {
				ch.Description = *m.Description
			}
			c.Modes = append(c.Modes, ch)
		}
	}
	if models != nil {
		c.Model = string(models.CurrentModelId)
		for _, m := range models.AvailableModels {
			ch := Choice{ID: string(m.ModelId), Name: m.Name}
			if m.Description != nil {
				ch.Description = *m.Description
			}
			c.Models = append(c.Models, ch)
		}
	}
	return c
}

func offered(list []Choice, id string) bool {
	for _, c := range list {
		if c.ID == id {
			return true
		}
	}
	return false
}

func names(list []Choice) string {
	var out []string
	for _, c := range list {
		out = append(out, c.ID)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// Choices returns the modes and models of the agent's session and the
// current ones (empty before its first session, or when it offers none).
func (a *Agent) Choices() Choices {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.choices.copy()
}

// Choose records the user's mode and model ("" leaves one as it is) and,
// when the agent's session is open, sends them at once: a mode or model
// the session does not offer is refused, saying which it offers. With no
// session open they are sent to the next one (checked then).
func (a *Agent) Choose(ctx context.Context, mode, model string) (Choices, error) {
	a.mu.Lock()
	p := a.p
	cur := a.choices.copy()
	a.mu.Unlock()
	open := p != nil && p.sessionID != "" && !cur.Empty()
	if open {
		if mode != "" && !offered(cur.Modes, mode) {
			return cur, fmt.Errorf("the agent does not offer the mode %q (it offers: %s)", mode, names(cur.Modes))
		}
		if model != "" && !offered(cur.Models, model) {
			return cur, fmt.Errorf("the agent does not offer the model %q (it offers: %s)", model, names(cur.Models))
		}
	}
	a.mu.Lock()
	if mode != "" {
		a.want.Mode = mode
	}
	if model != "" {
		a.want.Model = model
	}
	a.mu.Unlock()
	if !open {
		return cur, nil
	}
	_, err := a.apply(ctx, p)
	return a.Choices(), err
}

// apply sends the wanted mode and model that differ from the session's,
// and returns notices for those the session does not offer (then the
// wish is forgotten: the agent chose for itself).
func (a *Agent) apply(ctx context.Context, p *process) ([]string, error) {
	a.mu.Lock()
	want, cur, sid := a.want, a.choices, p.sessionID
	a.mu.Unlock()
	var notes []string
	if want.Mode != "" && want.Mode != cur.Mode {
		if !offered(cur.Modes, want.Mode) {
			notes = append(notes, fmt.Sprintf("the agent does not offer the mode %q now (it offers: %s): it stays in %q", want.Mode, names(cur.Modes), cur.Mode))
			a.mu.Lock()
			a.want.Mode = ""
			a.mu.Unlock()
		} else if _, err := p.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: acp.SessionId(sid), ModeId: acp.SessionModeId(want.Mode)}); err != nil {
			return notes, fmt.Errorf("the agent refused the mode %q: %s", want.Mode, describe(err, ""))
		} else {
			a.mu.Lock()
			a.choices.Mode, a.choicesSent = want.Mode, false
			a.mu.Unlock()
		}
	}
	if want.Model != "" && want.Model != cur.Model {
		if !offered(cur.Models, want.Model) {
			notes = append(notes, fmt.Sprintf("the agent does not offer the model %q now (it offers: %s): it stays on %q", want.Model, names(cur.Models), cur.Model))
			a.mu.Lock()
			a.want.Model = ""
			a.mu.Unlock()
		} else if _, err := p.conn.UnstableSetSessionModel(ctx, acp.UnstableSetSessionModelRequest{SessionId: acp.SessionId(sid), ModelId: acp.UnstableModelId(want.Model)}); err != nil {
			return notes, fmt.Errorf("the agent refused the model %q: %s", want.Model, describe(err, ""))
		} else {
			a.mu.Lock()
			a.choices.Model, a.choicesSent = want.Model, false
			a.mu.Unlock()
		}
	}
	return notes, nil
}

// opened records the modes and models of a session that just opened.
func (a *Agent) openedChoices(c Choices) {
	a.mu.Lock()
	a.choices, a.choicesSent = c, false
	a.mu.Unlock()
}

// modeChanged is the agent's current_mode_update: it switched modes itself.
func (a *Agent) modeChanged(id string) Choices {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.choices.Mode = id
	if a.want.Mode != "" && a.want.Mode != id {
		a.want.Mode = id // the agent moved on (e.g. out of plan mode): follow it
	}
	return a.choices.copy()
}

// unsent returns the choices when they changed since the last turn saw
// them (ok false otherwise), and marks them seen.
func (a *Agent) unsent() (Choices, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.choicesSent || a.choices.Empty() {
		return Choices{}, false
	}
	a.choicesSent = true
	return a.choices.copy(), true
}
