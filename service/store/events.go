package store

import "context"

// Event is one published session event; Seq is its SSE id within the session.
type Event struct {
	SessionID string
	Seq       int64
	Type      string
	Data      string // JSON
	CreatedAt string
}

// AppendEvents stores a batch of events in one transaction. Seqs are assigned
// by the caller (the event hub, the single writer of events).
func (s *Store) AppendEvents(ctx context.Context, evs []Event) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO events(session_id, seq, type, data, created_at) VALUES (?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, e := range evs {
		if _, err := st.ExecContext(ctx, e.SessionID, e.Seq, e.Type, e.Data, e.CreatedAt); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// LastSeq returns the highest event seq of a session, 0 when it has none.
func (s *Store) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?`, sessionID).Scan(&n)
	return n, err
}

// EventsAfter returns up to limit events of a session with seq > after, in order.
func (s *Store) EventsAfter(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session_id, seq, type, data, created_at FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.SessionID, &e.Seq, &e.Type, &e.Data, &e.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
