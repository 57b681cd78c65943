package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ToolCall is a tool call sent to the desktop.
type ToolCall struct {
	ID                                                       string // the service's id, as the desktop sees it
	ModelCallID                                              string // the model's own id for the call
	SessionID, TurnID, Name, Arguments, Risk, Reason, Status string
	OK                                                       bool
	Result, Error, CreatedAt, ResolvedAt                     string
}

// CreateToolCall records a pending tool call.
func (s *Store) CreateToolCall(ctx context.Context, c ToolCall) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO tool_calls(id, model_call_id, session_id, turn_id, name, arguments, risk, reason, status, created_at) VALUES (?,?,?,?,?,?,?,?,'pending',?)`,
		c.ID, c.ModelCallID, c.SessionID, c.TurnID, c.Name, c.Arguments, c.Risk, c.Reason, s.ts())
	return err
}

// ResolveToolCall records the result of a pending tool call of sessionID.
// A call that does not exist in that session is ErrNotFound; one that is no
// longer pending is ErrConflict.
func (s *Store) ResolveToolCall(ctx context.Context, sessionID, id, status string, ok bool, result, errText string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var cur string
	err = tx.QueryRowContext(ctx, `SELECT status FROM tool_calls WHERE id = ? AND session_id = ?`, id, sessionID).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("tool call %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	if cur != "pending" {
		return fmt.Errorf("tool call %s is %s: %w", id, cur, ErrConflict)
	}
	okInt := 0
	if ok {
		okInt = 1
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tool_calls SET status = ?, ok = ?, result = ?, error = ?, resolved_at = ? WHERE id = ?`, status, okInt, result, errText, s.ts(), id); err != nil {
		return err
	}
	return tx.Commit()
}
