package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ResumeTurn returns the write that records a running turn that continues
// the session's shown branch from a tool call an interrupted turn left
// (a task's run whose call was allowed after Jarvis restarted). It has no
// user message of its own: line, a status line saying why it runs, is its
// first message. A session can have one running turn: a second is
// ErrConflict. line's TurnID, ID and CreatedAt are set once the write has run.
func (s *Store) ResumeTurn(id string, line *Message) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.StmtContext(ctx, s.countRunning).QueryRowContext(ctx, line.SessionID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("session %s already has a running turn: %w", line.SessionID, ErrConflict)
		}
		parent, err := turnParent(ctx, tx, line.SessionID, "")
		if err != nil {
			return err
		}
		now := s.ts()
		if _, err := tx.StmtContext(ctx, s.insertTurn).ExecContext(ctx, id, line.SessionID, TurnRunning, now, parent); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET head_turn_id = ? WHERE id = ?`, id, line.SessionID); err != nil {
			return err
		}
		line.TurnID, line.CreatedAt = id, now
		return s.addMessage(ctx, tx, line)
	}
}

// ReopenToolCall forgets how a tool call that did not complete ended
// (interrupted, cancelled, timed out), so that a resumed turn requests it
// again under the same id. A pending call is ErrConflict; an unknown one
// ErrNotFound.
func (s *Store) ReopenToolCall(ctx context.Context, sessionID, id string) error {
	var status string
	err := s.w.QueryRowContext(ctx, `SELECT status FROM tool_calls WHERE id = ? AND session_id = ?`, id, sessionID).Scan(&status)
	if err == sql.ErrNoRows {
		return fmt.Errorf("tool call %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	if status == "pending" {
		return fmt.Errorf("tool call %s is still pending: %w", id, ErrConflict)
	}
	_, err = s.w.ExecContext(ctx, `DELETE FROM tool_calls WHERE id = ? AND session_id = ? AND status <> 'pending'`, id, sessionID)
	return err
}

// SetToolResult replaces the stored result of a tool call (its tool
// message) with the one a resumed turn got, and returns that message's id.
func (s *Store) SetToolResult(ctx context.Context, sessionID, callID, content, meta string) (int64, error) {
	var id int64
	err := s.w.QueryRowContext(ctx, `UPDATE messages SET content = ?, meta = ? WHERE session_id = ? AND role = 'tool' AND tool_call_id = ? RETURNING id`,
		content, meta, sessionID, callID).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("no result of tool call %s: %w", callID, ErrNotFound)
	}
	return id, err
}
