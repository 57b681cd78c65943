// Package reclaim gives a SQLite database's free pages back to the file
// system, so that deleting (conversations, old events, pruned checkpoints,
// audit rows past their cap) shrinks the file instead of leaving its pages
// unused inside it: the database is kept in auto_vacuum INCREMENTAL mode
// (Incremental) and its free pages are released on demand (Free).
package reclaim

import (
	"context"
	"database/sql"
)

// Incremental puts db (its writer) in auto_vacuum INCREMENTAL mode. A new,
// empty database takes the mode at once; one made without it (auto_vacuum
// NONE) is rewritten once with VACUUM, which takes a moment the first time.
func Incremental(ctx context.Context, db *sql.DB) error {
	var mode int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return err
	}
	if mode == 2 {
		return nil
	}
	if _, err := db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `VACUUM`)
	return err
}

// Free gives the free pages of db (its writer, in INCREMENTAL mode) back to
// the file system (PRAGMA incremental_vacuum). In WAL mode the file shrinks
// at the next checkpoint.
func Free(ctx context.Context, db *sql.DB) error {
	// Each step of the pragma frees one page and returns a row: read them
	// all, or it stops at the first.
	rows, err := db.QueryContext(ctx, `PRAGMA incremental_vacuum`)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}
