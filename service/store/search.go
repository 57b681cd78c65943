package store

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SearchHit is a session whose messages contain the searched text: the
// session and its newest matching message, cut around the match.
type SearchHit struct {
	Session   Session
	MessageID int64
	Role      string
	Snippet   string
}

// snippetRunes is how much text a hit shows on each side of the match.
const snippetRunes = 40

// matchingMessages returns the FROM and WHERE of the user and assistant
// messages whose text contains q, case-insensitively, with its arguments.
// Three characters or more ask the trigram index (migration 044) for the
// messages holding trigrams of q, which every match holds, and then check
// each such message's text; shorter text is
// looked for in every message. The check is SQLite's LIKE for ASCII text
// (which folds ASCII case, as the index does) and contains_fold for the rest.
func matchingMessages(q string) (string, []any) {
	check, arg := `contains_fold(m.content, ?)`, any(q)
	if isASCII(q) {
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		check, arg = `m.content LIKE ? ESCAPE '\'`, "%"+r.Replace(q)+"%"
	}
	rs := []rune(q)
	if len(rs) < 3 {
		return `FROM messages m WHERE m.role IN ('user', 'assistant') AND ` + check, []any{arg}
	}
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			// Each trigram one quoted FTS5 string: no query syntax of the user's gets through.
			terms = append(terms, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		}
	}
	// Every trigram of q, or maxTrigrams of them spread over it from its
	// first to its last: the more the index intersects, the fewer messages
	// are read to check (a common word's pieces each occur in many words).
	n := len(rs) - 2
	k := min(n, maxTrigrams)
	for j := range k {
		i := 0
		if k > 1 {
			i = j * (n - 1) / (k - 1)
		}
		add(string(rs[i : i+3]))
	}
	return `FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE f.messages_fts MATCH ? AND ` + check,
		[]any{strings.Join(terms, " AND "), arg}
}

// maxTrigrams bounds the trigrams of a query the index is asked for.
const maxTrigrams = 12

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFold is the SQL function contains_fold(text, q): whether text
// contains q, any case (Unicode simple case folding, as the index's).
func containsFold(text, q string) bool {
	return strings.Contains(strings.ToLower(text), strings.ToLower(q))
}

// SearchSessions finds the non-deleted sessions (of agentID, or all) whose
// user or assistant messages contain q, case-insensitively, most recently
// updated first, at most limit (matchingMessages says how).
func (s *Store) SearchSessions(ctx context.Context, q, agentID string, limit int) ([]SearchHit, error) {
	q = strings.TrimSpace(strings.ToValidUTF8(q, ""))
	if q == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 50
	}
	// Messages stored since the last batch go into the index first (searchindex.go).
	if err := s.indexMessages(ctx); err != nil {
		return nil, err
	}
	matches, args := matchingMessages(q)
	// The subquery's columns (sid, mid, role, content) do not clash with the
	// session's, so sessionCols reads as it does everywhere else.
	query := `SELECT ` + sessionCols + `, x.mid, x.role, x.content
FROM sessions JOIN (
    SELECT m.session_id AS sid, m.id AS mid, m.role AS role, m.content AS content
    FROM messages m
    JOIN (SELECT m.session_id AS s, MAX(m.id) AS newest
          ` + matches + ` GROUP BY m.session_id) b ON m.id = b.newest
) x ON sessions.id = x.sid
WHERE deleted_at IS NULL`
	if agentID != "" {
		query += ` AND agent_id = ?`
		args = append(args, agentID)
	}
	query += ` ORDER BY updated_at DESC, id LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SearchHit
	for rows.Next() {
		var h SearchHit
		var content string
		ss := &h.Session
		if err := rows.Scan(&ss.ID, &ss.JarvisSessionID, &ss.AgentID, &ss.Name, &ss.Attributes, &ss.LastSnippet, &ss.PinnedAt, &ss.CreatedAt, &ss.UpdatedAt, &ss.DeletedAt, &h.MessageID, &h.Role, &content); err != nil {
			return nil, err
		}
		h.Snippet = snippetAround(content, q, snippetRunes)
		out = append(out, h)
	}
	return out, rows.Err()
}

// snippetAround cuts text to the first case-insensitive occurrence of q with
// up to n runes either side, on one line, with "…" where it was cut.
func snippetAround(text, q string, n int) string {
	rs := []rune(strings.Join(strings.Fields(text), " "))
	qs := []rune(strings.ToLower(strings.Join(strings.Fields(q), " ")))
	at := 0
	for i := 0; i+len(qs) <= len(rs); i++ {
		j := 0
		for j < len(qs) && unicode.ToLower(rs[i+j]) == qs[j] {
			j++
		}
		if j == len(qs) {
			at = i
			break
		}
	}
	from, to := max(at-n, 0), min(at+len(qs)+n, len(rs))
	out := string(rs[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(rs) {
		out += "…"
	}
	return out
}
