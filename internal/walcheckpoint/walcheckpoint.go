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

// Loop runs a PASSIVE checkpoint on db every interval until done is closed:
// it copies what it can without waiting for readers or blocking the writer.
// When dirty is not nil, a tick without a write since the last checkpoint
// (dirty false) is skipped. Errors go to report.
func Loop(done <-chan struct{}, db *sql.DB, every time.Duration, dirty *atomic.Bool, report func(error)) {
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
			if _, err := db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
				report(err)
			}
		}
	}
}
