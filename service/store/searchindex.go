package store

import (
	"context"
	"log/slog"
	"time"
)

// The search index (messages_fts) is not written by the transactions that
// store messages (migration 033): FTS5 writes a new index segment at the end
// of every transaction that adds to it, which was about half the time of a
// turn's start and end commits. indexMessages adds the messages stored since
// its last run instead, in transactions of at most indexBatch ids: in the
// background every indexEvery, and before every search, so that a search
// still finds every message stored before it. A crash between a message's commit and its
// indexing loses nothing: the message is stored, and the next run (in the
// background after a restart, or a search) indexes it.

// indexEvery is how often new messages are indexed in the background.
const indexEvery = time.Second

// pendingSQL is true when messages were stored after the index's mark.
const pendingSQL = `SELECT (SELECT COALESCE(MAX(id), 0) FROM messages) > (SELECT upto FROM messages_fts_upto)`

// indexBatch bounds the message ids one indexing transaction covers, so that
// a large backlog (after a restart, or a busy second) holds the writer in
// short turns and the commits of running turns pass between them.
const indexBatch = 500

// indexMessages indexes the user and assistant messages stored after
// messages_fts_upto and moves the mark to the newest message.
func (s *Store) indexMessages(ctx context.Context) error {
	for {
		var pending bool
		// A read first: nothing pending (the usual case) takes no write transaction.
		if err := s.r.QueryRowContext(ctx, pendingSQL).Scan(&pending); err != nil || !pending {
			return err
		}
		if err := s.indexNext(ctx); err != nil {
			return err
		}
	}
}

// indexNext indexes the messages of the next indexBatch ids after the mark.
func (s *Store) indexNext(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var upto, newest int64
	if err := tx.QueryRowContext(ctx, `SELECT upto, (SELECT COALESCE(MAX(id), 0) FROM messages) FROM messages_fts_upto`).Scan(&upto, &newest); err != nil {
		return err
	}
	if newest <= upto {
		return nil
	}
	newest = min(newest, upto+indexBatch)
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages WHERE id > ? AND id <= ? AND role IN ('user', 'assistant') AND content <> ''`, upto, newest); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages_fts_upto SET upto = ?`, newest); err != nil {
		return err
	}
	return tx.Commit()
}

// every runs job every d until Close, logging its failures as what: the
// search index's batches (searchindex.go) and the maintenance of events and
// free pages (compact.go).
func (s *Store) every(d time.Duration, what string, job func(context.Context) error, log *slog.Logger) {
	defer s.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := job(context.Background()); err != nil {
				log.Warn(what, "err", err)
			}
		}
	}
}
