package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"jarvis/api"
)

// RoundtableCard is a round table of a session as the window lays it out
// when the transcript is loaded again: the stored messages keep only the
// rendered Markdown (a round-table agent's reply, or the round_table tool's
// result), so the run itself is read back from GET /v1/roundtables/{id}.
type RoundtableCard struct {
	RunID        string          `json:"runId"`
	TurnID       string          `json:"turnId,omitempty"`
	Source       string          `json:"source"` // api | tool | agent
	Status       string          `json:"status"` // running | completed | ... (api.RoundtableRun)
	Outcome      string          `json:"outcome,omitempty"`
	Summary      string          `json:"summary,omitempty"`
	Participants []string        `json:"participants"`
	CreatedAt    string          `json:"createdAt"`
	Result       json.RawMessage `json:"result,omitempty"`
	Markdown     string          `json:"markdown,omitempty"`
}

// maxRoundtableCards bounds the runs read back for one transcript (the
// list route's own maximum).
const maxRoundtableCards = 500

// roundtableCards returns the round tables of a session, oldest first. A
// finished run is read in full (result and Markdown, without the agents'
// raw answers, which the card's "Show every agent's answers" button reads
// on demand); a running one as it is listed, its progress comes on the
// stream. A run that cannot be read is left out: its reply still shows as
// Markdown.
func (s svc) roundtableCards(ctx context.Context, sessionID string) ([]RoundtableCard, error) {
	var list api.RoundtableRunList
	p := "/v1/roundtables?general_session_id=" + url.QueryEscape(sessionID) + "&limit=" + strconv.Itoa(maxRoundtableCards)
	if err := s.c.Do(ctx, http.MethodGet, p, nil, &list); err != nil {
		return nil, err
	}
	out := make([]RoundtableCard, 0, len(list.Runs))
	for _, r := range list.Runs {
		if r.GeneralSessionID != "" && r.GeneralSessionID != sessionID {
			continue
		}
		if r.Status != "running" {
			var full api.RoundtableRun
			if err := s.c.Do(ctx, http.MethodGet, "/v1/roundtables/"+url.PathEscape(r.ID), nil, &full); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			r = full
		}
		c := RoundtableCard{RunID: r.ID, TurnID: r.TurnID, Source: r.Source, Status: r.Status, Outcome: r.Outcome,
			Summary: r.Summary, Participants: r.Participants, CreatedAt: r.CreatedAt, Markdown: r.Markdown}
		if c.Participants == nil {
			c.Participants = []string{}
		}
		if len(r.Result) > 0 && string(r.Result) != "null" {
			c.Result = r.Result
		}
		out = append(out, c)
	}
	// The list is newest first; the transcript reads oldest first.
	slices.Reverse(out)
	return out, nil
}
