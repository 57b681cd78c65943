package store

import (
	"context"
	"database/sql"
	"errors"
)

// Summary is a compaction of a session's older messages: requests send it
// in place of every message up to UptoMessageID.
type Summary struct {
	ID            int64
	SessionID     string
	FromMessageID int64 // first message this compaction covered (earlier ones are in the summary it folded in)
	UptoMessageID int64
	Content       string
	TokensBefore  int
	TokensAfter   int
	Messages      int // model-visible messages summarized this time
	Window        int
	Reason        string // budget | overflow | manual
	CreatedAt     string
}

// Usage is what the model server counted for a turn's requests.
type Usage struct {
	PromptTokens, CompletionTokens, Requests int
	// ContextTokens is the last request's prompt and reply: the session's
	// context use after it, measured on top of summary SummaryID.
	ContextTokens int
	SummaryID     int64
}

// LatestSummary returns a session's latest summary; ok is false when it has none.
func (s *Store) LatestSummary(ctx context.Context, sessionID string) (sum Summary, ok bool, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT `+summaryColumns+` FROM summaries WHERE session_id = ? ORDER BY id DESC LIMIT 1`, sessionID).
		Scan(sum.fields()...)
	if errors.Is(err, sql.ErrNoRows) {
		return Summary{}, false, nil
	}
	return sum, err == nil, err
}

const summaryColumns = `id, session_id, from_message_id, upto_message_id, content, tokens_before, tokens_after, messages, window, reason, created_at`

func (sum *Summary) fields() []any {
	return []any{&sum.ID, &sum.SessionID, &sum.FromMessageID, &sum.UptoMessageID, &sum.Content, &sum.TokensBefore, &sum.TokensAfter, &sum.Messages, &sum.Window, &sum.Reason, &sum.CreatedAt}
}

// Summaries returns a session's summaries, oldest first.
func (s *Store) Summaries(ctx context.Context, sessionID string) ([]Summary, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+summaryColumns+` FROM summaries WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var sum Summary
		if err := rows.Scan(sum.fields()...); err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, rows.Err()
}

// AddSummary stores a summary and makes its size the session's context use.
func (s *Store) AddSummary(ctx context.Context, sum Summary) (Summary, error) {
	sum.CreatedAt = s.ts()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return sum, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO summaries(session_id, from_message_id, upto_message_id, content, tokens_before, tokens_after, messages, window, reason, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?)`, sum.SessionID, sum.FromMessageID, sum.UptoMessageID, sum.Content, sum.TokensBefore, sum.TokensAfter, sum.Messages, sum.Window, sum.Reason, sum.CreatedAt)
	if err != nil {
		return sum, err
	}
	if sum.ID, err = res.LastInsertId(); err != nil {
		return sum, err
	}
	if err := setContext(ctx, tx, sum.SessionID, sum.TokensAfter, sum.ID); err != nil {
		return sum, err
	}
	return sum, tx.Commit()
}

// CountSummaries returns how many summaries a session has.
func (s *Store) CountSummaries(ctx context.Context, sessionID string) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM summaries WHERE session_id = ?`, sessionID).Scan(&n)
	return n, err
}

// RecordUsage returns the write that adds a turn's usage to it and sets the
// session's context use (when u.ContextTokens is above 0: the turn ended
// with the reply of its last request, the last message stored).
func (s *Store) RecordUsage(turnID, sessionID string, u Usage) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		if u.Requests == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE turns SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, requests = requests + ? WHERE id = ?`,
			u.PromptTokens, u.CompletionTokens, u.Requests, turnID); err != nil {
			return err
		}
		if u.ContextTokens <= 0 {
			return nil
		}
		return setContext(ctx, tx, sessionID, u.ContextTokens, u.SummaryID)
	}
}

// setContext records a session's measured context use, covering every
// message stored so far.
func setContext(ctx context.Context, tx *sql.Tx, sessionID string, tokens int, summaryID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET context_tokens = ?, context_summary_id = ?,
		context_upto_id = (SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?) WHERE id = ?`, tokens, summaryID, sessionID, sessionID)
	return err
}

// ContextUse is a session's last measured context use.
type ContextUse struct {
	Tokens    int
	SummaryID int64 // the summary it was measured on (0: none)
	UptoID    int64 // the last message it covers
}

// ContextUse returns a session's last measured context use.
func (s *Store) ContextUse(ctx context.Context, sessionID string) (ContextUse, error) {
	var u ContextUse
	err := s.r.QueryRowContext(ctx, `SELECT context_tokens, context_summary_id, context_upto_id FROM sessions WHERE id = ?`, sessionID).Scan(&u.Tokens, &u.SummaryID, &u.UptoID)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// Then returns the write that runs w and then next.
func (w Write) Then(next Write) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		if err := w(ctx, tx); err != nil {
			return err
		}
		return next(ctx, tx)
	}
}

// forgetContext drops a session's summaries and context use, with its
// messages (clear, delete): the summaries hold the old conversation.
func forgetContext(ctx context.Context, tx *sql.Tx, sessionID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM summaries WHERE session_id = ?`, sessionID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET context_tokens = 0, context_summary_id = 0, context_upto_id = 0 WHERE id = ?`, sessionID)
	return err
}
