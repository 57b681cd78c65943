package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Session is a stored conversation.
type Session struct {
	ID              string
	JarvisSessionID string
	AgentID         string
	Name            string
	Attributes      string // JSON object
	LastSnippet     string
	PinnedAt        string
	CreatedAt       string
	UpdatedAt       string
	DeletedAt       string
}

const sessionCols = `id, COALESCE(jarvis_session_id,''), agent_id, name, attributes, last_snippet, COALESCE(pinned_at,''), created_at, updated_at, COALESCE(deleted_at,'')`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var s Session
	err := row.Scan(&s.ID, &s.JarvisSessionID, &s.AgentID, &s.Name, &s.Attributes, &s.LastSnippet, &s.PinnedAt, &s.CreatedAt, &s.UpdatedAt, &s.DeletedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	return s, err
}

// CreateSession inserts a session. A duplicate id or jarvis_session_id is ErrConflict.
func (s *Store) CreateSession(ctx context.Context, sess Session) (Session, error) {
	now := s.ts()
	if sess.Attributes == "" {
		sess.Attributes = "{}"
	}
	sess.CreatedAt, sess.UpdatedAt = now, now
	_, err := s.w.ExecContext(ctx, `INSERT INTO sessions(id, jarvis_session_id, agent_id, name, attributes, created_at, updated_at) VALUES (?,?,?,?,?,?,?)`,
		sess.ID, nullString(sess.JarvisSessionID), sess.AgentID, sess.Name, sess.Attributes, now, now)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return sess, fmt.Errorf("session %s: %w", sess.ID, ErrConflict)
		}
		return sess, err
	}
	return sess, nil
}

// Session returns the session with id, deleted or not.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	return scanSession(s.selectSession.QueryRowContext(ctx, id))
}

// SessionByJarvisID returns the session mapped to a desktop conversation id.
func (s *Store) SessionByJarvisID(ctx context.Context, jid string) (Session, error) {
	return scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE jarvis_session_id = ?`, jid))
}

// touch advances a session's updated_at (in tx when not nil).
func (s *Store) touch(ctx context.Context, tx *sql.Tx, id, snippet, now string) error {
	if snippet != "" {
		_, err := stmt(ctx, tx, s.touchSnippet).ExecContext(ctx, now, snippet, id)
		return err
	}
	_, err := stmt(ctx, tx, s.touchOnly).ExecContext(ctx, now, id)
	return err
}

// ReleaseJarvisID unmaps a desktop conversation id from the session that holds it.
func (s *Store) ReleaseJarvisID(ctx context.Context, jid string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE sessions SET jarvis_session_id = NULL WHERE jarvis_session_id = ?`, jid)
	return err
}

// ListSessions returns non-deleted sessions, most recently updated first,
// optionally of one agent.
func (s *Store) ListSessions(ctx context.Context, agentID string, limit int) ([]Session, error) {
	return s.ListSessionsAfter(ctx, agentID, limit, nil)
}

// ListSessionsAfter is ListSessions from the session after `after` in that
// order (its updated_at and id, as a page's last row had them), nil: from
// the first. Pages are read by the position, not by an offset: a page costs
// the same however deep it is.
func (s *Store) ListSessionsAfter(ctx context.Context, agentID string, limit int, after *Session) ([]Session, error) {
	if limit <= 0 {
		limit = 500
	}
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE deleted_at IS NULL`
	args := []any{}
	if agentID != "" {
		q += ` AND agent_id = ?`
		args = append(args, agentID)
	}
	if after != nil {
		q += ` AND (updated_at < ? OR (updated_at = ? AND id > ?))`
		args = append(args, after.UpdatedAt, after.UpdatedAt, after.ID)
	}
	q += ` ORDER BY updated_at DESC, id LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}

// UpdateSession sets the fields that are not nil and advances updated_at.
func (s *Store) UpdateSession(ctx context.Context, id string, name, attributes *string, pinnedAt *string) error {
	sets := []string{"updated_at = ?"}
	args := []any{s.ts()}
	if name != nil {
		sets, args = append(sets, "name = ?"), append(args, *name)
	}
	if attributes != nil {
		sets, args = append(sets, "attributes = ?"), append(args, *attributes)
	}
	if pinnedAt != nil {
		sets, args = append(sets, "pinned_at = ?"), append(args, nullString(*pinnedAt))
	}
	args = append(args, id)
	res, err := s.w.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(sets, ", ")+` WHERE id = ? AND deleted_at IS NULL`, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return nil
}

// ClearSession removes a session's transcript and the events that copied
// its text, and keeps its identity (and its replay horizon, so that its
// seqs go on).
func (s *Store) ClearSession(ctx context.Context, id string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?`, id); err != nil {
		return err
	}
	if err := forgetContext(ctx, tx, id); err != nil {
		return err
	}
	// The stream's copies of the text go too (but a running turn's).
	if err := dropConversationEvents(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_snippet = '', updated_at = ? WHERE id = ?`, s.ts(), id); err != nil {
		return err
	}
	return tx.Commit()
}

// DeleteSession removes a session's transcript, the events that copied its
// text, its turns and tool calls, and marks it deleted; the row stays as a tombstone so its id keeps
// its agent and can be revived. The pages freed go back to the file system
// at the next Reclaim (the store's background loop, compact.go).
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := s.ts()
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ?, updated_at = ?, last_snippet = '', jarvis_session_id = NULL WHERE id = ? AND deleted_at IS NULL`, now, now, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?`, id); err != nil {
		return err
	}
	if err := forgetContext(ctx, tx, id); err != nil {
		return err
	}
	// Its stream's copies of the text, turns and tool calls (but a running
	// turn's) go too; the replay horizon keeps a revived session's seqs
	// going on.
	if err := dropConversationEvents(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_calls WHERE session_id = ? AND status <> 'pending'`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM turns WHERE session_id = ? AND status <> ?`, id, TurnRunning); err != nil {
		return err
	}
	return tx.Commit()
}

// ReviveSession clears a session's deleted mark.
func (s *Store) ReviveSession(ctx context.Context, id string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE sessions SET deleted_at = NULL, updated_at = ? WHERE id = ?`, s.ts(), id)
	return err
}
