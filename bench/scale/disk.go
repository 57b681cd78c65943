package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// share is one table's part of the database file: its rows, its indexes and
// (for the search index) its shadow tables.
type share struct {
	Table string
	Bytes int64
}

// tableShares measures what each table costs in the database at path: the
// size of a vacuumed copy less the size of that copy without the table
// (SQLite's dbstat table is not compiled into the driver). The database must
// not be open elsewhere for writing.
func tableShares(ctx context.Context, path string) (whole int64, out []share, err error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), "shares-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, nil, err
	}
	defer db.Close()
	base := filepath.Join(dir, "base.db")
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, base); err != nil {
		return 0, nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		AND name NOT IN (SELECT m.name FROM sqlite_schema v JOIN sqlite_schema m ON m.name LIKE v.name || '\_%' ESCAPE '\' WHERE v.sql LIKE 'CREATE VIRTUAL TABLE%')`)
	if err != nil {
		return 0, nil, err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if whole, err = fileSize(base); err != nil {
		return 0, nil, err
	}
	for i, t := range tables {
		var rows int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`).Scan(&rows); err == nil && rows == 0 {
			continue // an empty table's page or two
		}
		cp := filepath.Join(dir, fmt.Sprintf("t%d.db", i))
		if err := copyWithout(ctx, base, cp, t); err != nil {
			return 0, nil, fmt.Errorf("%s: %w", t, err)
		}
		n, err := fileSize(cp)
		if err != nil {
			return 0, nil, err
		}
		os.Remove(cp)
		if whole-n > 0 {
			out = append(out, share{Table: t, Bytes: whole - n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return whole, out, nil
}

// copyWithout writes a vacuumed copy of src without table t to dst.
func copyWithout(ctx context.Context, src, dst, t string) error {
	db, err := sql.Open("sqlite3", "file:"+src+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return err
	}
	db.Close()
	w, err := sql.Open("sqlite3", "file:"+dst+"?_foreign_keys=off")
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.ExecContext(ctx, `DROP TABLE "`+strings.ReplaceAll(t, `"`, `""`)+`"`); err != nil {
		return err
	}
	_, err = w.ExecContext(ctx, `VACUUM`)
	return err
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// dbFiles is the size of the database at path with its WAL, if any.
func dbFiles(path string) (int64, error) {
	n, err := fileSize(path)
	if err != nil {
		return 0, err
	}
	if w, err := fileSize(path + "-wal"); err == nil {
		n += w
	}
	return n, nil
}
