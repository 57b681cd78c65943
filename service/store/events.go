package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Event is one published session event; Seq is its SSE id within the session.
type Event struct {
	SessionID string
	Seq       int64
	Type      string
	Data      string // JSON
	CreatedAt string
}

// Write is a change made in the same transaction as an event, so that the
// event is stored exactly when the change is (a turn's start with its
// user.message event, its end with its final event).
type Write func(ctx context.Context, tx *sql.Tx) error

// EventWrite is an event and an optional write that goes with it.
type EventWrite struct {
	Event
	Write Write
}

// AppendEvents stores a batch of events, with their writes, in one
// transaction (group commit). A write that fails is rolled back alone and its
// event is not stored: errs[i] says so. err is set when the whole batch
// failed. Each stored event's Seq is set from nextSeq, called only once its
// write has succeeded, so failed writes leave no gap in a session's seqs (the
// event hub, the single writer of events, numbers them). nextSeq may call
// stored for the session's highest stored seq, read in the transaction.
func (s *Store) AppendEvents(ctx context.Context, evs []EventWrite, nextSeq func(sessionID string, stored func() (int64, error)) int64) (errs []error, err error) {
	errs = make([]error, len(evs))
	w, writes := -1, 0
	for i, e := range evs {
		if e.Write != nil {
			w, writes = i, writes+1
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return errs, err
	}
	defer tx.Rollback()
	switch {
	case writes == 1:
		// One write (a turn's start, or its end with the events before it)
		// runs first and needs no savepoint: when it fails, the transaction
		// is rolled back and begun again for the other events.
		if werr := evs[w].Write(ctx, tx); werr != nil {
			errs[w] = werr
			if len(evs) == 1 {
				return errs, nil
			}
			tx.Rollback()
			if tx, err = s.w.BeginTx(ctx, nil); err != nil {
				return errs, err
			}
			defer tx.Rollback()
		}
	case writes > 1:
		for i, e := range evs {
			if e.Write == nil {
				continue
			}
			sp := fmt.Sprintf("w%d", i)
			if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
				return errs, err
			}
			if werr := e.Write(ctx, tx); werr != nil {
				errs[i] = werr
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO "+sp+"; RELEASE "+sp); err != nil {
					return errs, err
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, "RELEASE "+sp); err != nil {
				return errs, err
			}
		}
	}
	st := tx.StmtContext(ctx, s.insertEvent)
	defer st.Close()
	for i, e := range evs {
		if errs[i] != nil {
			continue
		}
		evs[i].Seq = nextSeq(e.SessionID, func() (n int64, err error) {
			return n, tx.StmtContext(ctx, s.selectLastSeqW).QueryRowContext(ctx, e.SessionID).Scan(&n)
		})
		if _, err := st.ExecContext(ctx, e.SessionID, evs[i].Seq, e.Type, e.Data, e.CreatedAt); err != nil {
			return errs, err
		}
	}
	return errs, tx.Commit()
}

// LastSeq returns the highest event seq of a session, 0 when it has none.
func (s *Store) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := s.selectLastSeq.QueryRowContext(ctx, sessionID).Scan(&n)
	return n, err
}

// EventsAfter returns up to limit events of a session with seq > after, in order.
func (s *Store) EventsAfter(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	rows, err := s.selectEventsAfter.QueryContext(ctx, sessionID, after, limit)
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
