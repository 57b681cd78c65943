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

// Search is GET /v1/sessions/search?q=&agentId=&limit=.
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
	hits, err := a.Store.SearchSessions(r.Context(), q, v.Get("agentId"), limit)
	if err != nil {
		return err
	}
	out := api.SessionSearch{Results: []api.SessionSearchHit{}}
	for _, h := range hits {
		out.Results = append(out.Results, api.SessionSearchHit{Session: Summary(h.Session), MessageID: h.MessageID, Role: h.Role, Snippet: h.Snippet})
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}
