package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Branches (migration 035): every turn has a parent, the turn before it in
// its branch; Regenerate, Retry and Edit start a turn with the parent of the
// one it replaces, so the two are versions of one place in the conversation.
// A session's head is its newest shown turn: the shown branch is the head and
// its parents, and only its messages are read (the transcript, the model's
// history). Messages of no turn are always shown.

// branchCTE names the turns of session ?1 on the branch that ends at the
// turn head selects (shown) and the session's other turns (hidden); a head
// of "" is a branch of no turn (a session with none yet; the place before
// a first turn).
func branchCTE(head string) string {
	return `WITH RECURSIVE shown(id) AS (
    ` + head + `
    UNION SELECT t.parent_id FROM turns t JOIN shown ON t.id = shown.id WHERE t.parent_id <> ''
), hidden(id) AS (
    SELECT id FROM turns WHERE session_id = ?1 AND id NOT IN shown
) `
}

// shownCTE is branchCTE of the session's head; branchAtCTE of the turn ?3.
var (
	shownCTE    = branchCTE(`SELECT head_turn_id FROM sessions WHERE id = ?1 AND head_turn_id <> ''`)
	branchAtCTE = branchCTE(`SELECT ?3 WHERE ?3 <> ''`)
)

const messageColumns = `SELECT id, session_id, turn_id, role, content, tool_calls, tool_call_id, meta, created_at
    FROM messages WHERE session_id = ?1 AND id > ?2 AND turn_id NOT IN hidden ORDER BY id`

var selectShownMessagesSQL = shownCTE + messageColumns

// BranchMessagesAfter returns the messages after the one with id after of
// the branch that ends at turn head (see BranchHead), in order: what a
// turn that starts there continues from.
func (s *Store) BranchMessagesAfter(ctx context.Context, sessionID string, after int64, head string) ([]Message, error) {
	rows, err := s.r.QueryContext(ctx, branchAtCTE+messageColumns, sessionID, after, head)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}

// BranchHead is the turn a new turn of sessionID continues from: the
// session's head, or, for a new version of turn replaces, that turn's
// parent ("" when it is the first).
func (s *Store) BranchHead(ctx context.Context, sessionID, replaces string) (string, error) {
	var head string
	q, arg := `SELECT head_turn_id FROM sessions WHERE id = ?`, []any{sessionID}
	if replaces != "" {
		q, arg = `SELECT parent_id FROM turns WHERE id = ? AND session_id = ?`, []any{replaces, sessionID}
	}
	err := s.r.QueryRowContext(ctx, q, arg...).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("turn %s: %w", replaces, ErrNotFound)
	}
	return head, err
}

// Versions are the turns that are versions of one place in a session's
// shown branch (siblings: the same parent), oldest first; Shown is the one
// on the branch.
type Versions struct {
	Shown string
	Turns []string
}

// ShownVersions returns, for each turn of the shown branch that has other
// versions, its versions, in the branch's order.
func (s *Store) ShownVersions(ctx context.Context, sessionID string) ([]Versions, error) {
	rows, err := s.r.QueryContext(ctx, shownCTE+`SELECT t.id, t.parent_id, t.id IN shown FROM turns t
WHERE t.session_id = ?1 AND t.parent_id IN (SELECT parent_id FROM turns WHERE id IN shown)
ORDER BY t.rowid`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byParent := map[string]*Versions{}
	var order []string
	for rows.Next() {
		var id, parent string
		var shown bool
		if err := rows.Scan(&id, &parent, &shown); err != nil {
			return nil, err
		}
		v := byParent[parent]
		if v == nil {
			v = &Versions{}
			byParent[parent] = v
			order = append(order, parent)
		}
		v.Turns = append(v.Turns, id)
		if shown {
			v.Shown = id
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []Versions
	for _, p := range order {
		if v := byParent[p]; len(v.Turns) > 1 && v.Shown != "" {
			out = append(out, *v)
		}
	}
	return out, nil
}

// ShowVersion makes turn id of sessionID shown: the session's head becomes
// the newest turn of the branch that continues from it (following each
// turn's newest child). A turn not in the session is ErrNotFound.
func (s *Store) ShowVersion(ctx context.Context, sessionID, id string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns WHERE id = ? AND session_id = ?`, id, sessionID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("turn %s: %w", id, ErrNotFound)
	}
	head := id
	for seen := map[string]bool{id: true}; ; {
		var child string
		err := tx.QueryRowContext(ctx, `SELECT id FROM turns WHERE session_id = ? AND parent_id = ? ORDER BY rowid DESC LIMIT 1`, sessionID, head).Scan(&child)
		if errors.Is(err, sql.ErrNoRows) || seen[child] {
			break
		}
		if err != nil {
			return err
		}
		seen[child] = true
		head = child
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET head_turn_id = ? WHERE id = ?`, head, sessionID); err != nil {
		return err
	}
	return tx.Commit()
}

// turnParent is the parent of a new turn of sessionID: the session's head,
// or, when it replaces a turn, that turn's parent (ErrNotFound when the
// session has no such turn).
func turnParent(ctx context.Context, tx *sql.Tx, sessionID, replaces string) (string, error) {
	var parent string
	if replaces == "" {
		err := tx.QueryRowContext(ctx, `SELECT head_turn_id FROM sessions WHERE id = ?`, sessionID).Scan(&parent)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return parent, err
	}
	err := tx.QueryRowContext(ctx, `SELECT parent_id FROM turns WHERE id = ? AND session_id = ?`, replaces, sessionID).Scan(&parent)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("turn %s: %w", replaces, ErrNotFound)
	}
	return parent, err
}

// HiddenBefore reports whether a message of a turn off the branch that ends
// at turn head has an id up to upto: a summary up to upto then summarizes
// another branch, and is not this branch's.
func (s *Store) HiddenBefore(ctx context.Context, sessionID string, upto int64, head string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, branchAtCTE+`SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = ?1 AND id <= ?2 AND turn_id IN hidden)`, sessionID, upto, head).Scan(&n)
	return n == 1, err
}
