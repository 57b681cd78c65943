package memory

import (
	"context"
	"time"
)

// Every write (a note saved, a line marked superseded, an external edit)
// adds a small segment to the full-text index, and a search looks every
// query word up in every segment: after a hundred writes the index had
// eleven segments and keyword searches took 4x as long (measured with
// bench/memeval -marks). FTS5's own automerge is off (index.go: it does the
// work inside the write and once pulled the big segment into a merge that
// took over a second), so mergeLoop does it after writes, off the write
// path, in slices short enough that a write waiting for the index lock is
// not held up for long.
const (
	mergeEvery  = 2 * time.Second
	mergePages  = 64                    // pages of merge output per step
	mergeBudget = 50 * time.Millisecond // per tick; the rest waits for the next
)

func (s *Store) mergeLoop() {
	defer s.wg.Done()
	t := time.NewTicker(mergeEvery)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			if !s.segs.Swap(false) {
				continue
			}
			ctx, cancel := s.untilClose()
			more, err := s.mergeSegments(ctx, mergeBudget)
			if err != nil && ctx.Err() == nil { // not interrupted by Close
				s.log.Warn("memory index merge", "err", err)
			}
			cancel()
			if more {
				s.segs.Store(true)
			}
		}
	}
}

// mergeSegments merges the index's small segments for up to budget and
// reports whether work is left. With usermerge 2, FTS5's 'merge' merges the
// segments of any level holding two or more; it did work when the
// connection's change count grows by two or more (FTS5's documented test).
func (s *Store) mergeSegments(ctx context.Context, budget time.Duration) (more bool, err error) {
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('usermerge', 2)`); err != nil {
		return false, err
	}
	start := time.Now()
	for time.Since(start) < budget {
		var before, after int64
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return false, err
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('merge', ?)`, mergePages); err != nil {
			return false, err
		}
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return false, err
		}
		if after-before < 2 {
			return false, nil
		}
		s.dirty.Store(true) // for the checkpoint
	}
	return true, nil
}
