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

// matchingMessages returns the FROM, the WHERE and the newest-first order
// column of the user and assistant messages (m) whose text contains q,
// case-insensitively, with the arguments.
// Three characters or more ask the trigram index (migration 044) for the
// messages holding trigrams of q, which every match holds, and then check
// each such message's text; shorter text is
// looked for in every message. The check is SQLite's LIKE for ASCII text
// (which folds ASCII case, as the index does) and contains_fold for the rest.
func matchingMessages(q string) (from, where, order string, args []any) {
	check, arg := textCheck(q)
	rs := []rune(q)
	if len(rs) < 3 {
		return `FROM messages m`, `m.role IN ('user', 'assistant') AND ` + check, `m.id`, []any{arg}
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
	// The index gives its rows newest first (ORDER BY its rowid).
	return `FROM messages_fts f JOIN messages m ON m.id = f.rowid`, `f.messages_fts MATCH ? AND ` + check, `f.rowid`,
		[]any{strings.Join(terms, " AND "), arg}
}

// textCheck is the SQL condition (and its argument) that message m's text
// contains q, any case.
func textCheck(q string) (check string, arg any) {
	if isASCII(q) {
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		return `m.content LIKE ? ESCAPE '\'`, "%" + r.Replace(q) + "%"
	}
	return `contains_fold(m.content, ?)`, q
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
// user or assistant messages contain q, case-insensitively: at most limit,
// the one whose newest matching message is newest first
// (matchingMessages says how messages match). The matches are read newest
// first and the reading stops at the limit-th session: a common word costs
// what a rare one does, however many messages hold it.
func (s *Store) SearchSessions(ctx context.Context, q, agentID string, limit int) ([]SearchHit, error) {
	return s.SearchSessionsBefore(ctx, q, agentID, limit, 0)
}

// SearchSessionsBefore is SearchSessions's page after the one whose last
// hit was message before (0: the first page): it reads the matching
// messages older than that one and leaves out the sessions the pages
// before it listed (those with a match from before on).
func (s *Store) SearchSessionsBefore(ctx context.Context, q, agentID string, limit int, before int64) ([]SearchHit, error) {
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
	from, where, order, args := matchingMessages(q)
	query := `SELECT s.id, COALESCE(s.jarvis_session_id,''), s.agent_id, s.name, s.attributes, s.last_snippet, COALESCE(s.pinned_at,''), s.created_at, s.updated_at, COALESCE(s.deleted_at,''),
    m.id, m.role, m.content
` + from + ` JOIN sessions s ON s.id = m.session_id
WHERE ` + where + ` AND s.deleted_at IS NULL`
	if agentID != "" {
		query += ` AND s.agent_id = ?`
		args = append(args, agentID)
	}
	if before > 0 {
		query += ` AND ` + order + ` < ?`
		args = append(args, before)
	}
	query += ` ORDER BY ` + order + ` DESC`
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close() // also ends the reading once the page is full
	var out []SearchHit
	seen := map[string]bool{}
	for len(out) < limit && rows.Next() {
		var h SearchHit
		var content string
		ss := &h.Session
		if err := rows.Scan(&ss.ID, &ss.JarvisSessionID, &ss.AgentID, &ss.Name, &ss.Attributes, &ss.LastSnippet, &ss.PinnedAt, &ss.CreatedAt, &ss.UpdatedAt, &ss.DeletedAt, &h.MessageID, &h.Role, &content); err != nil {
			return nil, err
		}
		if seen[ss.ID] {
			continue // an older match of a session already found
		}
		seen[ss.ID] = true
		if before > 0 {
			// A session with a match from before on was on an earlier page.
			listed, err := s.matchesFrom(ctx, q, ss.ID, before)
			if err != nil {
				return nil, err
			}
			if listed {
				continue
			}
		}
		h.Snippet = snippetAround(content, q, snippetRunes)
		out = append(out, h)
	}
	return out, rows.Err()
}

// matchesFrom reports whether a session has a message from id on that
// matches q (read through the session's own messages, not the index).
func (s *Store) matchesFrom(ctx context.Context, q, sessionID string, id int64) (bool, error) {
	check, arg := textCheck(q)
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM messages m WHERE m.session_id = ? AND m.id >= ?
    AND m.role IN ('user', 'assistant') AND `+check+` LIMIT 1)`, sessionID, id, arg).Scan(&n)
	return n > 0, err
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
