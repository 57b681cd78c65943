package app

// Search across conversations: the find box (Ctrl+K) asks the service for
// the sessions whose messages contain the text (GET /v1/sessions/search),
// so it finds conversations the window has never opened.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"jarvis/api"
)

// SearchSessions returns a page of the sessions whose user or assistant
// messages contain q, each with a snippet around the match, the newest
// match first; cursor "" asks for the first page, a page's NextCursor for
// the one after it (none after the last). Blank text finds nothing (the
// window then shows its list as is).
func (a *App) SearchSessions(q, cursor string) (api.SessionSearch, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return api.SessionSearch{Results: []api.SessionSearchHit{}}, nil
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	p := "/v1/sessions/search?limit=" + strconv.Itoa(SearchPage) + "&q=" + url.QueryEscape(q)
	if cursor != "" {
		p += "&cursor=" + url.QueryEscape(cursor)
	}
	var out api.SessionSearch
	if err := a.s.c.Do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return api.SessionSearch{}, friendly(err)
	}
	if out.Results == nil {
		out.Results = []api.SessionSearchHit{}
	}
	return out, nil
}

// SearchPage is how many conversations a page of the find box's results
// holds.
const SearchPage = 50
