package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Scheduled tasks (service/tasks), their runs and the Inbox.

// TaskRow is a stored task: its definition as given (JSON) and the newest
// occurrence settled.
type TaskRow struct {
	ID, Name, Spec, Source, SettledUntil, CreatedAt, UpdatedAt string
}

// PutTask inserts a task, or replaces the definition of the one with its id
// (its settled occurrences stay settled). settled is where a new task's
// schedule starts: occurrences before it never run.
func (s *Store) PutTask(ctx context.Context, t TaskRow) error {
	now := s.ts()
	if t.SettledUntil == "" {
		t.SettledUntil = now
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO tasks(id, name, spec, source, settled_until, created_at, updated_at) VALUES (?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, spec = excluded.spec, source = excluded.source, updated_at = excluded.updated_at`,
		t.ID, t.Name, t.Spec, t.Source, t.SettledUntil, now, now)
	return err
}

// Tasks lists every task, oldest first.
func (s *Store) Tasks(ctx context.Context) ([]TaskRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, name, spec, source, settled_until, created_at, updated_at FROM tasks ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TaskRow
	for rows.Next() {
		var t TaskRow
		if err := rows.Scan(&t.ID, &t.Name, &t.Spec, &t.Source, &t.SettledUntil, &t.CreatedAt, &t.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Task returns one task; ErrNotFound if there is none.
func (s *Store) Task(ctx context.Context, id string) (TaskRow, error) {
	var t TaskRow
	err := s.r.QueryRowContext(ctx, `SELECT id, name, spec, source, settled_until, created_at, updated_at FROM tasks WHERE id = ?`, id).
		Scan(&t.ID, &t.Name, &t.Spec, &t.Source, &t.SettledUntil, &t.CreatedAt, &t.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	return t, err
}

// DeleteTask removes a task (its runs stay, as do their sessions).
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM tasks WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// RunRow is one claimed occurrence of a task.
type RunRow struct {
	ID, TaskID, Occurrence, Status, Owner, SessionID, TurnID, Summary, StartedAt, EndedAt string
	CaughtUp                                                                              bool
}

// ClaimRun claims an occurrence of a task and settles the task up to it, in
// one transaction: ErrConflict when another process (or an earlier pass)
// claimed it first, or the task is gone. Exactly one claim of an occurrence
// ever succeeds, whichever process on this database tries.
func (s *Store) ClaimRun(ctx context.Context, r RunRow) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if r.StartedAt == "" {
		r.StartedAt = s.ts()
	}
	caught := 0
	if r.CaughtUp {
		caught = 1
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_runs(task_id, occurrence, id, status, caught_up, owner, started_at, summary) VALUES (?,?,?,?,?,?,?,?)`,
		r.TaskID, r.Occurrence, r.ID, r.Status, caught, r.Owner, r.StartedAt, r.Summary); err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return fmt.Errorf("occurrence %s of task %s: %w", r.Occurrence, r.TaskID, ErrConflict)
		}
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE tasks SET settled_until = ? WHERE id = ? AND settled_until < ?`, r.Occurrence, r.TaskID, r.Occurrence)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("task %s is gone or already past %s: %w", r.TaskID, r.Occurrence, ErrConflict)
	}
	return tx.Commit()
}

// AddRun records a run asked for by hand ("Run now"): its occurrence is the
// moment it was asked for, and the task's settled occurrences stay as they
// are (its schedule goes on). ErrConflict if the same moment was taken.
func (s *Store) AddRun(ctx context.Context, r RunRow) error {
	if r.StartedAt == "" {
		r.StartedAt = s.ts()
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO task_runs(task_id, occurrence, id, status, caught_up, owner, started_at, summary) VALUES (?,?,?,?,0,?,?,?)`,
		r.TaskID, r.Occurrence, r.ID, r.Status, r.Owner, r.StartedAt, r.Summary)
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("occurrence %s of task %s: %w", r.Occurrence, r.TaskID, ErrConflict)
	}
	return err
}

// UpdateRun records a run's session, turn, status and summary.
func (s *Store) UpdateRun(ctx context.Context, id, status, sessionID, turnID, summary string, ended bool) error {
	end := ""
	if ended {
		end = s.ts()
	}
	_, err := s.w.ExecContext(ctx, `UPDATE task_runs SET status = ?, session_id = CASE WHEN ? = '' THEN session_id ELSE ? END,
		turn_id = CASE WHEN ? = '' THEN turn_id ELSE ? END, summary = ?, ended_at = ? WHERE id = ?`,
		status, sessionID, sessionID, turnID, turnID, summary, end, id)
	return err
}

// Runs lists a task's runs, newest first ("" for every task's).
func (s *Store) Runs(ctx context.Context, taskID string, limit int) ([]RunRow, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+runCols+` FROM task_runs WHERE ? = '' OR task_id = ? ORDER BY started_at DESC, occurrence DESC LIMIT ?`, taskID, taskID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Run returns one run by its id; ErrNotFound if there is none.
func (s *Store) Run(ctx context.Context, id string) (RunRow, error) {
	return scanRun(s.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM task_runs WHERE id = ?`, id))
}

const runCols = `id, task_id, occurrence, status, caught_up, owner, session_id, turn_id, summary, started_at, ended_at`

func scanRun(row interface{ Scan(...any) error }) (RunRow, error) {
	var r RunRow
	err := row.Scan(&r.ID, &r.TaskID, &r.Occurrence, &r.Status, &r.CaughtUp, &r.Owner, &r.SessionID, &r.TurnID, &r.Summary, &r.StartedAt, &r.EndedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// InterruptRuns marks runs a dead process left running as failed.
func (s *Store) InterruptRuns(ctx context.Context) ([]RunRow, error) {
	runs, err := s.Runs(ctx, "", 1000)
	if err != nil {
		return nil, err
	}
	var out []RunRow
	for _, r := range runs {
		if r.Status != "running" {
			continue
		}
		if err := s.UpdateRun(ctx, r.ID, "failed", "", "", "Jarvis stopped while this run was going on.", true); err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// InboxRow is one Inbox item.
type InboxRow struct {
	ID, Kind, Title, Body, SessionID, TaskID, RunID, CallID, State, CreatedAt, UpdatedAt string
	Read, Done                                                                           bool
	// Call and Deadline: an approval's call (JSON) and when it expires.
	Call, Deadline string
}

// AddInbox stores a new Inbox item.
func (s *Store) AddInbox(ctx context.Context, it InboxRow) (InboxRow, error) {
	now := s.ts()
	it.CreatedAt, it.UpdatedAt = now, now
	_, err := s.w.ExecContext(ctx, `INSERT INTO inbox(id, kind, title, body, session_id, task_id, run_id, call_id, state, created_at, updated_at, call, deadline) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		it.ID, it.Kind, it.Title, it.Body, it.SessionID, it.TaskID, it.RunID, it.CallID, it.State, now, now, it.Call, it.Deadline)
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return it, fmt.Errorf("inbox item %s: %w", it.ID, ErrConflict)
	}
	return it, err
}

// AnswerID is the Inbox id of an answer that arrived while you were away,
// from what identifies its delivery (the runtime, the agent, the delivery
// id or call): a delivery sent again names the same item.
func AnswerID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "in_ans_" + hex.EncodeToString(h[:12])
}

// AddAnswer adds an answer of a delegated or external agent to the Inbox
// (kind "answer", state "open") unless an item with its id is there
// already; added says whether it was new.
func (s *Store) AddAnswer(ctx context.Context, it InboxRow) (added bool, err error) {
	now := s.ts()
	res, err := s.w.ExecContext(ctx, `INSERT INTO inbox(id, kind, title, body, session_id, task_id, run_id, call_id, state, created_at, updated_at)
		VALUES (?,'answer',?,?,?,'','',?,'open',?,?) ON CONFLICT(id) DO NOTHING`,
		it.ID, it.Title, it.Body, it.SessionID, it.CallID, now, now)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

const inboxCols = `id, kind, title, body, session_id, task_id, run_id, call_id, state, read, done, created_at, updated_at, call, deadline`

func scanInbox(row interface{ Scan(...any) error }) (InboxRow, error) {
	var it InboxRow
	err := row.Scan(&it.ID, &it.Kind, &it.Title, &it.Body, &it.SessionID, &it.TaskID, &it.RunID, &it.CallID, &it.State, &it.Read, &it.Done, &it.CreatedAt, &it.UpdatedAt, &it.Call, &it.Deadline)
	if errors.Is(err, sql.ErrNoRows) {
		return it, ErrNotFound
	}
	return it, err
}

// Inbox lists the Inbox, newest first (items marked done only with all),
// and counts the unread items that are not done.
func (s *Store) Inbox(ctx context.Context, all bool, limit int) ([]InboxRow, int, error) {
	if limit <= 0 {
		limit = 500
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+inboxCols+` FROM inbox WHERE ? OR done = 0 ORDER BY created_at DESC, id DESC LIMIT ?`, all, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []InboxRow
	for rows.Next() {
		it, err := scanInbox(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var unread int
	err = s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM inbox WHERE read = 0 AND done = 0`).Scan(&unread)
	return out, unread, err
}

// InboxItem returns one item; ErrNotFound if there is none.
func (s *Store) InboxItem(ctx context.Context, id string) (InboxRow, error) {
	return scanInbox(s.w.QueryRowContext(ctx, `SELECT `+inboxCols+` FROM inbox WHERE id = ?`, id))
}

// UpdateInbox applies the fields given (nil: unchanged).
func (s *Store) UpdateInbox(ctx context.Context, id string, read, done *bool, state, body *string) (InboxRow, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE inbox SET read = COALESCE(?, read), done = COALESCE(?, done), state = COALESCE(?, state),
		body = COALESCE(?, body), updated_at = ? WHERE id = ?`, boolArg(read), boolArg(done), strArg(state), strArg(body), s.ts(), id)
	if err != nil {
		return InboxRow{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return InboxRow{}, ErrNotFound
	}
	return s.InboxItem(ctx, id)
}

// SettleRunFailures marks read and done the open failure items of a run
// (what said it stopped, once it went on) and says how many it settled.
func (s *Store) SettleRunFailures(ctx context.Context, runID string) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE inbox SET read = 1, done = 1, updated_at = ? WHERE run_id = ? AND kind = 'failure' AND done = 0`, s.ts(), runID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RunWaitsForApproval says whether a call of the run waits for approval in
// the Inbox.
func (s *Store) RunWaitsForApproval(ctx context.Context, runID string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM inbox WHERE run_id = ? AND kind = 'approval' AND state = 'pending')`, runID).Scan(&n)
	return n == 1, err
}

func boolArg(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func strArg(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// WithdrawPendingApprovals settles the approvals a stopped process left
// pending: one whose call was kept (Call) stays pending until its deadline
// (allowed then, its task's run is started again with that call allowed),
// then expired; one without is withdrawn (its call ended with the process).
func (s *Store) WithdrawPendingApprovals(ctx context.Context) error {
	now := s.ts()
	if _, err := s.w.ExecContext(ctx, `UPDATE inbox SET state = 'withdrawn', updated_at = ? WHERE kind = 'approval' AND state = 'pending' AND call = ''`, now); err != nil {
		return err
	}
	_, err := s.ExpireApprovals(ctx)
	return err
}

// WithdrawRunApprovals marks the approvals still pending for a run that
// ended as withdrawn (nothing waits for them any more).
func (s *Store) WithdrawRunApprovals(ctx context.Context, runID string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE inbox SET state = 'withdrawn', updated_at = ? WHERE kind = 'approval' AND state = 'pending' AND run_id = ?`, s.ts(), runID)
	return err
}

// ExpireApprovals marks the pending approvals whose deadline has passed as
// expired; n is how many.
func (s *Store) ExpireApprovals(ctx context.Context) (n int64, err error) {
	now := s.ts()
	res, err := s.w.ExecContext(ctx, `UPDATE inbox SET state = 'expired', updated_at = ? WHERE kind = 'approval' AND state = 'pending' AND deadline != '' AND deadline <= ?`, now, now)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
