package store

import (
	"context"
	"fmt"
)

// LatestSession returns the agent's most recently updated non-deleted
// session (docs/protocols/agents.md's default routing), or ErrNotFound.
//
// It orders by julianday(updated_at) rather than by the text: RFC 3339 with
// trimmed fractional seconds ("…:05Z" vs "…:05.1Z") does not sort as text.
func (s *Store) LatestSession(ctx context.Context, agentID string) (Session, error) {
	sess, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions
		WHERE agent_id = ? AND deleted_at IS NULL
		ORDER BY julianday(updated_at) DESC, updated_at DESC, id LIMIT 1`, agentID))
	if err == ErrNotFound {
		return sess, fmt.Errorf("agent %s has no session: %w", agentID, ErrNotFound)
	}
	return sess, err
}
