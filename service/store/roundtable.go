package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// RoundtableAgent is a registered round-table agent (docs/protocols/roundtable-agents.md). The API key
// itself is never stored: APIKeyRef names it in the keyring.
type RoundtableAgent struct {
	Name           string
	Domain         string
	BaseURL        string
	Capabilities   string // JSON array
	Mode           string
	APIKeyRef      string
	TimeoutSeconds int
	Health         string
	HealthDetail   string
	HealthAt       string
	CreatedAt      string
	UpdatedAt      string
}

const rtAgentCols = `name, domain, base_url, capabilities, mode, api_key_ref, timeout_seconds, health, health_detail, COALESCE(health_at,''), created_at, updated_at`

func scanRTAgent(row interface{ Scan(...any) error }) (RoundtableAgent, error) {
	var a RoundtableAgent
	err := row.Scan(&a.Name, &a.Domain, &a.BaseURL, &a.Capabilities, &a.Mode, &a.APIKeyRef, &a.TimeoutSeconds,
		&a.Health, &a.HealthDetail, &a.HealthAt, &a.CreatedAt, &a.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// CreateRoundtableAgent inserts a registration; a taken name is ErrConflict.
func (s *Store) CreateRoundtableAgent(ctx context.Context, a RoundtableAgent) (RoundtableAgent, error) {
	now := s.ts()
	a.CreatedAt, a.UpdatedAt, a.Health = now, now, "unknown"
	_, err := s.w.ExecContext(ctx, `INSERT INTO roundtable_agents(name, domain, base_url, capabilities, mode, api_key_ref, timeout_seconds, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?)`, a.Name, a.Domain, a.BaseURL, a.Capabilities, a.Mode, a.APIKeyRef, a.TimeoutSeconds, now, now)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return a, fmt.Errorf("round-table agent %q is already registered: %w", a.Name, ErrConflict)
		}
		return a, err
	}
	return a, nil
}

// UpdateRoundtableAgent replaces a registration's fields (not its health).
func (s *Store) UpdateRoundtableAgent(ctx context.Context, a RoundtableAgent) (RoundtableAgent, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE roundtable_agents SET domain = ?, base_url = ?, capabilities = ?, mode = ?, api_key_ref = ?,
		timeout_seconds = ?, updated_at = ? WHERE name = ?`, a.Domain, a.BaseURL, a.Capabilities, a.Mode, a.APIKeyRef, a.TimeoutSeconds, s.ts(), a.Name)
	if err != nil {
		return a, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return a, fmt.Errorf("round-table agent %q: %w", a.Name, ErrNotFound)
	}
	return s.RoundtableAgent(ctx, a.Name)
}

// RoundtableAgent returns the registration of name.
func (s *Store) RoundtableAgent(ctx context.Context, name string) (RoundtableAgent, error) {
	a, err := scanRTAgent(s.w.QueryRowContext(ctx, `SELECT `+rtAgentCols+` FROM roundtable_agents WHERE name = ?`, name))
	if errors.Is(err, ErrNotFound) {
		return a, fmt.Errorf("round-table agent %q: %w", name, ErrNotFound)
	}
	return a, err
}

// RoundtableAgents returns every registration, oldest first (the
// registration order SelectParticipants keeps).
func (s *Store) RoundtableAgents(ctx context.Context) ([]RoundtableAgent, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+rtAgentCols+` FROM roundtable_agents ORDER BY created_at, name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RoundtableAgent
	for rows.Next() {
		a, err := scanRTAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// DeleteRoundtableAgent removes a registration and returns it (for its key ref).
func (s *Store) DeleteRoundtableAgent(ctx context.Context, name string) (RoundtableAgent, error) {
	a, err := s.RoundtableAgent(ctx, name)
	if err != nil {
		return a, err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM roundtable_agents WHERE name = ?`, name); err != nil {
		return a, err
	}
	return a, nil
}

// SetRoundtableAgentHealth records how an agent did in its last run. An
// agent deleted meanwhile is ignored.
func (s *Store) SetRoundtableAgentHealth(ctx context.Context, name, health, detail string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE roundtable_agents SET health = ?, health_detail = ?, health_at = ? WHERE name = ?`, health, detail, s.ts(), name)
	return err
}

// RoundtableRun is a stored deliberation.
type RoundtableRun struct {
	ID           string
	SessionID    string
	TurnID       string
	Source       string
	Task         string // JSON
	Participants string // JSON array
	Status       string
	Outcome      string
	Summary      string
	Result       string // JSON, "" while running
	CreatedAt    string
	FinishedAt   string
}

// RoundtableAnswer is one agent answer or exclusion of a run.
type RoundtableAnswer struct {
	Seq   int
	Agent string
	Phase string
	Kind  string
	Data  string // JSON
}

// Run statuses the store sets itself.
const (
	RunRunning     = "running"
	RunInterrupted = "interrupted"
)

const rtRunCols = `id, session_id, turn_id, source, task, participants, status, outcome, summary, result, created_at, COALESCE(finished_at,'')`

func scanRTRun(row interface{ Scan(...any) error }) (RoundtableRun, error) {
	var r RoundtableRun
	err := row.Scan(&r.ID, &r.SessionID, &r.TurnID, &r.Source, &r.Task, &r.Participants, &r.Status, &r.Outcome, &r.Summary, &r.Result, &r.CreatedAt, &r.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// CreateRoundtableRun records a run that is starting.
func (s *Store) CreateRoundtableRun(ctx context.Context, r RoundtableRun) (RoundtableRun, error) {
	r.CreatedAt, r.Status = s.ts(), RunRunning
	if r.Participants == "" {
		r.Participants = "[]"
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO roundtable_runs(id, session_id, turn_id, source, task, participants, status, created_at) VALUES (?,?,?,?,?,?,?,?)`,
		r.ID, r.SessionID, r.TurnID, r.Source, r.Task, r.Participants, r.Status, r.CreatedAt)
	return r, err
}

// FinishRoundtableRun returns the write that stores a run's end and every
// answer, to be committed with the run's result event.
func (s *Store) FinishRoundtableRun(id, status, outcome, summary, participants, result string, answers []RoundtableAnswer) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE roundtable_runs SET status = ?, outcome = ?, summary = ?, participants = ?, result = ?, finished_at = ? WHERE id = ?`,
			status, outcome, summary, participants, result, s.ts(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("round-table run %s: %w", id, ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM roundtable_answers WHERE run_id = ?`, id); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO roundtable_answers(run_id, seq, agent, phase, kind, data) VALUES (?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, a := range answers {
			if _, err := stmt.ExecContext(ctx, id, i+1, a.Agent, a.Phase, a.Kind, a.Data); err != nil {
				return err
			}
		}
		return nil
	}
}

// RoundtableRun returns a run.
func (s *Store) RoundtableRun(ctx context.Context, id string) (RoundtableRun, error) {
	r, err := scanRTRun(s.r.QueryRowContext(ctx, `SELECT `+rtRunCols+` FROM roundtable_runs WHERE id = ?`, id))
	if errors.Is(err, ErrNotFound) {
		return r, fmt.Errorf("round-table run %q: %w", id, ErrNotFound)
	}
	return r, err
}

// RoundtableRuns returns the newest runs, of one session when sessionID is set.
func (s *Store) RoundtableRuns(ctx context.Context, sessionID string, limit int) ([]RoundtableRun, error) {
	q := `SELECT ` + rtRunCols + ` FROM roundtable_runs`
	args := []any{}
	if sessionID != "" {
		q += ` WHERE session_id = ?`
		args = append(args, sessionID)
	}
	q += ` ORDER BY julianday(created_at) DESC, created_at DESC, id LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RoundtableRun
	for rows.Next() {
		r, err := scanRTRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RoundtableAnswers returns a run's answers in order.
func (s *Store) RoundtableAnswers(ctx context.Context, runID string) ([]RoundtableAnswer, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, agent, phase, kind, data FROM roundtable_answers WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RoundtableAnswer
	for rows.Next() {
		var a RoundtableAnswer
		if err := rows.Scan(&a.Seq, &a.Agent, &a.Phase, &a.Kind, &a.Data); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// InterruptRoundtableRuns marks runs a previous process left running as
// interrupted and returns how many there were.
func (s *Store) InterruptRoundtableRuns(ctx context.Context) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE roundtable_runs SET status = ?, summary = 'The service stopped while this round table was running.', finished_at = ? WHERE status = ?`,
		RunInterrupted, s.ts(), RunRunning)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
