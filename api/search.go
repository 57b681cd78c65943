package api

// SessionSearchHit is one conversation found by GET /v1/sessions/search: the
// session and its newest message containing the text, cut around the match.
type SessionSearchHit struct {
	Session   SessionSummary `json:"session"`
	MessageID int64          `json:"messageId"`
	Role      string         `json:"role"` // user | assistant
	Snippet   string         `json:"snippet"`
}

// SessionSearch answers GET /v1/sessions/search.
type SessionSearch struct {
	Results []SessionSearchHit `json:"results"`
	// NextCursor, on a full page, is the cursor of the page after it.
	NextCursor string `json:"nextCursor,omitempty"`
}
