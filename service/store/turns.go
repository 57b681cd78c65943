package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Turn statuses.
const (
	TurnRunning     = "running"
	TurnDone        = "done"
	TurnFailed      = "failed"
	TurnCancelled   = "cancelled"
	TurnInterrupted = "interrupted"
)

// Turn is one user message and the agent's work on it.
type Turn struct {
	ID, SessionID, Status, ErrorCode, StartedAt, EndedAt string
}

// StartTurn returns the write that records a running turn, the user's
// message that starts it, and the session's new snippet. A session can have
// one running turn: a second is ErrConflict.
// The message's TurnID, ID and CreatedAt are set once the write has run.
// The turn continues the session's shown branch (branches.go), or, when
// replaces is a turn's id, is a new version of that turn.
func (s *Store) StartTurn(id, replaces string, user *Message, snippet string) Write {
	return func(ctx context.Context, tx *sql.Tx) error { return s.startTurn(ctx, tx, id, replaces, user, snippet) }
}

func (s *Store) startTurn(ctx context.Context, tx *sql.Tx, id, replaces string, user *Message, snippet string) error {
	var n int
	if err := tx.StmtContext(ctx, s.countRunning).QueryRowContext(ctx, user.SessionID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("session %s already has a running turn: %w", user.SessionID, ErrConflict)
	}
	parent, err := turnParent(ctx, tx, user.SessionID, replaces)
	if err != nil {
		return err
	}
	now := s.ts()
	if _, err := tx.StmtContext(ctx, s.insertTurn).ExecContext(ctx, id, user.SessionID, TurnRunning, now, parent); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET head_turn_id = ? WHERE id = ?`, id, user.SessionID); err != nil {
		return err
	}
	user.TurnID, user.CreatedAt = id, now
	if err := s.addMessage(ctx, tx, user); err != nil {
		return err
	}
	return s.touch(ctx, tx, user.SessionID, snippet, now)
}

// FinishTurn returns the write that records a turn's last message (when not
// nil), its end, and the session's new snippet (when not empty).
func (s *Store) FinishTurn(id, sessionID, status, errorCode string, last *Message, snippet string) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		return s.finishTurn(ctx, tx, id, sessionID, status, errorCode, last, snippet)
	}
}

func (s *Store) finishTurn(ctx context.Context, tx *sql.Tx, id, sessionID, status, errorCode string, last *Message, snippet string) error {
	now := s.ts()
	if last != nil {
		last.CreatedAt = now
		if err := s.addMessage(ctx, tx, last); err != nil {
			return err
		}
	}
	if status == TurnDone && last != nil {
		// A turn that ended with its answer keeps no times of its own: its
		// start is its user message's and its end its last message's
		// (both written with the same clock reading); Turn reads them there.
		if _, err := tx.StmtContext(ctx, s.endTurnDone).ExecContext(ctx, id, TurnRunning); err != nil {
			return err
		}
	} else if _, err := tx.StmtContext(ctx, s.endTurn).ExecContext(ctx, status, errorCode, now, id, TurnRunning); err != nil {
		return err
	}
	return s.touch(ctx, tx, sessionID, snippet, now)
}

// Turn returns a turn.
func (s *Store) Turn(ctx context.Context, id string) (Turn, error) {
	var t Turn
	err := s.r.QueryRowContext(ctx, `SELECT id, session_id, status, error_code, started_at, COALESCE(ended_at,'') FROM turns WHERE id = ?`, id).
		Scan(&t.ID, &t.SessionID, &t.Status, &t.ErrorCode, &t.StartedAt, &t.EndedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	if err == nil && t.StartedAt == "" {
		// A done turn's times are its messages' (finishTurn).
		err = s.r.QueryRowContext(ctx, `SELECT COALESCE(MIN(created_at), ''), COALESCE(MAX(created_at), '') FROM messages
WHERE session_id = ? AND turn_id = ?`, t.SessionID, t.ID).Scan(&t.StartedAt, &t.EndedAt)
	}
	return t, err
}

// InterruptedMessage is what a turn a dead process left running says.
const InterruptedMessage = "The service stopped while this turn was running; send the message again to retry."

// InterruptRunning marks every turn still running (the process that ran it
// died) as interrupted, and their pending tool calls too. It returns them.
func (s *Store) InterruptRunning(ctx context.Context) ([]Turn, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, session_id FROM turns WHERE status = 'running'`) // the turns_running index
	if err != nil {
		return nil, err
	}
	var out []Turn
	for rows.Next() {
		var t Turn
		if err := rows.Scan(&t.ID, &t.SessionID); err != nil {
			rows.Close()
			return nil, err
		}
		t.Status = TurnInterrupted
		out = append(out, t)
	}
	rows.Close()
	now := s.ts()
	if _, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, error_code = 'interrupted', ended_at = ? WHERE status = 'running'`, TurnInterrupted, now); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tool_calls SET status = 'interrupted', resolved_at = ? WHERE status = 'pending'`, now); err != nil {
		return nil, err
	}
	for _, t := range out {
		line := Message{SessionID: t.SessionID, TurnID: t.ID, Role: "status", Content: InterruptedMessage, Meta: EndLineMeta("interrupted"), CreatedAt: now}
		if err := s.addMessage(ctx, tx, &line); err != nil {
			return nil, err
		}
	}
	return out, tx.Commit()
}
