package sessionsapi

// Search across conversations: GET /v1/sessions/search finds sessions by the
// text of their user and assistant messages (the store's trigram index), so
// the window finds conversations it has never opened.

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/httpapi"
)

// maxSearchQuery bounds the searched text: a find box, not a document.
const maxSearchQuery = 256

// Search is GET /v1/sessions/search?q=&agentId=&limit=&cursor=. A full page
// says where the next one starts (nextCursor, passed back as cursor: its
// last hit's message); a later page never lists a session again.
func (a *API) Search(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q := strings.TrimSpace(v.Get("q"))
	if q == "" {
		return httpapi.Errorf(http.StatusBadRequest, "missing_field", "q is required: the text to find").With("field", "q")
	}
	if !utf8.ValidString(q) || utf8.RuneCountInString(q) > maxSearchQuery {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "q must be valid UTF-8 text of at most %d characters", maxSearchQuery).With("field", "q")
	}
	limit := 50
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "limit must be an integer from 1 to 200").With("field", "limit")
		}
		limit = n
	}
	var before int64
	if c := v.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n < 1 {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "cursor is not one this search gave (pass nextCursor back as it is)").With("field", "cursor")
		}
		before = n
	}
	hits, err := a.Store.SearchSessionsBefore(r.Context(), q, v.Get("agentId"), limit, before)
	if err != nil {
		return err
	}
	out := api.SessionSearch{Results: []api.SessionSearchHit{}}
	for _, h := range hits {
		out.Results = append(out.Results, api.SessionSearchHit{Session: Summary(h.Session), MessageID: h.MessageID, Role: h.Role, Snippet: h.Snippet})
	}
	if len(hits) == limit {
		out.NextCursor = strconv.FormatInt(hits[len(hits)-1].MessageID, 10)
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}
