package store

import (
	"context"
	"time"
)

// LateTask is an A2A task whose turn ended before it did: its answer may
// still come, until Until (table a2a_late).
type LateTask struct {
	AgentID, TaskID, SessionID string
	Until                      time.Time
}

// KeepLateTask records a task whose answer may still come.
func (s *Store) KeepLateTask(ctx context.Context, t LateTask) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO a2a_late(agent_id, task_id, session_id, until) VALUES (?,?,?,?)
		ON CONFLICT(agent_id, task_id) DO UPDATE SET session_id = excluded.session_id, until = excluded.until`,
		t.AgentID, t.TaskID, t.SessionID, Timestamp(t.Until))
	return err
}

// LateTasks lists the tasks whose answer may still come, soonest to end first.
func (s *Store) LateTasks(ctx context.Context) ([]LateTask, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT agent_id, task_id, session_id, until FROM a2a_late ORDER BY until`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LateTask
	for rows.Next() {
		var t LateTask
		var until string
		if err := rows.Scan(&t.AgentID, &t.TaskID, &t.SessionID, &until); err != nil {
			return nil, err
		}
		t.Until, _ = time.Parse(timeLayout, until)
		out = append(out, t)
	}
	return out, rows.Err()
}

// TakeLateTask removes a task's record and says whether it was there: of
// two that found its answer (a push and a poll), one takes it.
func (s *Store) TakeLateTask(ctx context.Context, agentID, taskID string) (bool, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM a2a_late WHERE agent_id = ? AND task_id = ?`, agentID, taskID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
