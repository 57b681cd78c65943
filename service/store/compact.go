package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"jarvis/internal/reclaim"
)

// Events are kept whole for the replay window (Options.ReplayWindow): a
// client that reconnects with a Last-Event-ID gets exactly what it missed,
// deltas included, also across a restart. Past the window a session's
// events are deleted (migration 044); events_compacted keeps the session's
// seqs going on from where they were (lastSeqSQL): everything an event said is
// in the transcript (messages, which the stream's user.message,
// assistant.final and tool events were copies of). Turns stay: a session's
// branches are the chain of their parents. events_compacted.upto_seq
// is the session's replay horizon: a Last-Event-ID before it gets
// stream.reset (reload the transcript), as an unknown one does.

// DefaultReplayWindow is how long events are kept whole by default.
const DefaultReplayWindow = time.Hour

// compactEvery is how often the background loop compacts and reclaims.
const compactEvery = time.Minute

// compactBatch bounds the sessions one CompactEvents run looks at.
const compactBatch = 200

// CompactEvents deletes the events older than the replay window of the
// sessions that changed since their last compaction, at most compactBatch
// sessions a call; more reports whether sessions are left for another call.
// Events of a running turn and after it wait for a later run.
func (s *Store) CompactEvents(ctx context.Context) (more bool, err error) {
	cutoff := Timestamp(s.now().Add(-s.window))
	rows, err := s.r.QueryContext(ctx, `SELECT s.id FROM sessions s LEFT JOIN events_compacted c ON c.session_id = s.id
WHERE c.at IS NULL OR c.at < s.updated_at LIMIT ?`, compactBatch+1)
	if err != nil {
		return false, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return false, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if len(ids) > compactBatch {
		ids, more = ids[:compactBatch], true
	}
	for _, id := range ids {
		if err := s.compactSession(ctx, id, cutoff); err != nil {
			return false, fmt.Errorf("compact events of %s: %w", id, err)
		}
	}
	return more, nil
}

// compactSession deletes one session's events older than cutoff (and
// before any running turn's first event), and records
// how far it got and the cutoff it used.
func (s *Store) compactSession(ctx context.Context, sessionID, cutoff string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := dropEventsBefore(ctx, tx, sessionID, cutoff); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE events_compacted SET at = ? WHERE session_id = ?`, cutoff, sessionID); err != nil {
		return err
	}
	return tx.Commit()
}

// dropEventsBefore deletes a session's events created before cutoff, up to
// the first of a running turn.
func dropEventsBefore(ctx context.Context, tx *sql.Tx, sessionID, cutoff string) error {
	return dropEventsOf(ctx, tx, sessionID, cutoff, "")
}

// textEvents are the event types that carry a conversation's text: a
// cleared or deleted conversation's go at once, not after the window.
const textEvents = `type IN ('user.message', 'assistant.delta', 'assistant.final', 'tool.request', 'tool.result', 'status', 'error')`

// dropConversationEvents deletes the events of a session that carry its
// text (but a running turn's); the others (the
// session's own changes) stay for the replay window.
func dropConversationEvents(ctx context.Context, tx *sql.Tx, sessionID string) error {
	return dropEventsOf(ctx, tx, sessionID, everything, textEvents)
}

func dropEventsOf(ctx context.Context, tx *sql.Tx, sessionID, cutoff, only string) error {
	// The first event of a running turn, and of the window, bound what goes.
	var limit int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MIN(seq), 1 << 62) FROM events WHERE session_id = ? AND (created_at >= ?
    OR (type = 'user.message' AND json_extract(data, '$.turn_id') IN (SELECT id FROM turns WHERE session_id = ? AND status = 'running')))`,
		sessionID, cutoff, sessionID).Scan(&limit); err != nil {
		return err
	}
	return dropEvents(ctx, tx, sessionID, limit, only)
}

// everything is a cutoff after every event's time.
const everything = "9999"

// dropEvents deletes a session's events before seq limit (of the types
// only says, when not empty), and moves its replay horizon to the newest
// deleted one, from which its seqs go on.
func dropEvents(ctx context.Context, tx *sql.Tx, sessionID string, limit int64, only string) error {
	and := ""
	if only != "" {
		and = " AND " + only
	}
	var upto int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ? AND seq < ?`, sessionID, limit).Scan(&upto); err != nil {
		return err
	}
	if upto > 0 {
		// Turns stay: a session's branches are the chain of their parents
		// (service/store/branches.go).
		if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ? AND seq <= ?`+and, sessionID, upto); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO events_compacted(session_id, upto_seq, at) VALUES (?, ?, '')
ON CONFLICT(session_id) DO UPDATE SET upto_seq = MAX(upto_seq, excluded.upto_seq)`, sessionID, upto)
	return err
}

// ReplayHorizon is the seq of a session's newest deleted event (0 when
// none was): a replay from a Last-Event-ID before it would miss events.
func (s *Store) ReplayHorizon(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(upto_seq), 0) FROM events_compacted WHERE session_id = ?`, sessionID).Scan(&n)
	return n, err
}

// Reclaim gives the database's free pages back to the file system
// (incremental vacuum): what deleting conversations, compacting events and
// pruning freed. The file shrinks at the next WAL checkpoint.
func (s *Store) Reclaim(ctx context.Context) error { return reclaim.Free(ctx, s.w) }

// FreePages is the number of unused pages in the database file.
func (s *Store) FreePages(ctx context.Context) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&n)
	return n, err
}

// Maintain compacts every session's events past the replay window and
// reclaims the free pages.
func (s *Store) Maintain(ctx context.Context) error {
	for {
		more, err := s.CompactEvents(ctx)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		select {
		case <-s.stop:
			return nil
		default:
		}
	}
	return s.Reclaim(ctx)
}
