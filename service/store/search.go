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

// SearchSessions finds the non-deleted sessions (of agentID, or all) whose
// user or assistant messages contain q, case-insensitively, most recently
// updated first, at most limit. Three characters or more use the trigram
// index; shorter text is matched by a scan of the index's rows, which is
// still bounded by the number of indexed messages.
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
	var where string
	var args []any
	if utf8.RuneCountInString(q) >= 3 {
		// One quoted FTS5 string: the trigram tokenizer makes it a
		// substring match, and no query syntax of the user's gets through.
		where, args = `f.messages_fts MATCH ?`, []any{`"` + strings.ReplaceAll(q, `"`, `""`) + `"`}
	} else {
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		where, args = `f.content LIKE ? ESCAPE '\'`, []any{"%" + r.Replace(q) + "%"}
	}
	// The subquery's columns (sid, mid, role, content) do not clash with the
	// session's, so sessionCols reads as it does everywhere else.
	query := `SELECT ` + sessionCols + `, x.mid, x.role, x.content
FROM sessions JOIN (
    SELECT m.session_id AS sid, m.id AS mid, m.role AS role, m.content AS content
    FROM messages m
    JOIN (SELECT m.session_id AS s, MAX(m.id) AS newest
          FROM messages_fts f JOIN messages m ON m.id = f.rowid
          WHERE ` + where + ` GROUP BY m.session_id) b ON m.id = b.newest
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
