// Package walcheckpoint checkpoints a SQLite database's write-ahead log from
// a connection of its own, so that no commit pays for it. With SQLite's
// default (wal_autocheckpoint, every 1,000 pages) the commit that crosses
// the mark copies the log back into the database and syncs both files
// before it returns: milliseconds on one request in a few dozen. Callers
// set wal_autocheckpoint to 0 on their writer and run Loop.
package walcheckpoint

import (
	"database/sql"
	"sync/atomic"
	"time"
)

// restartFrames is the log length past which Loop restarts the log: SQLite's
// own default checkpoint mark (about 4 MB of 4 KB pages).
const restartFrames = 1000

// Loop runs a PASSIVE checkpoint on ck every interval until done is closed:
// it copies what it can without waiting for readers or blocking the writer.
//
// A PASSIVE checkpoint never starts the log over; the writer does, at the
// next commit, when it finds the whole log copied back and no reader in it.
// Under a steady stream of commits that never happens (each commit appends
// while the copy runs), and the log grows without bound: 316 MB in 10 s of
// bench/service against a 3.6 MB database, each read searching a larger
// index. So when the log holds restartFrames frames or more after the
// PASSIVE pass, a RESTART checkpoint copies the rest and waits for the
// readers, so that the next commit starts the log from its beginning. It
// runs on writer, the pool of the database's one writing connection: it
// takes its turn between two transactions (a few frames to copy and the
// database file's sync) instead of polling SQLite's write lock against a
// busy writer with sleeps of up to 100 ms.
//
// When dirty is not nil, a tick without a write since the last checkpoint
// (dirty false) is skipped. Errors go to report.
func Loop(done <-chan struct{}, ck, writer *sql.DB, every time.Duration, dirty *atomic.Bool, report func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if dirty != nil && !dirty.Swap(false) {
				continue
			}
			var busy, frames, copied int
			if err := ck.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
				report(err)
				continue
			}
			if frames >= restartFrames {
				if _, err := writer.Exec(`PRAGMA wal_checkpoint(RESTART)`); err != nil {
					report(err)
				}
			}
		}
	}
}
