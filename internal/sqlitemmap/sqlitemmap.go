// Package sqlitemmap opens SQLite databases (mattn/go-sqlite3) whose
// connections memory-map the database file: reads then take pages from the
// map instead of a read() per page, which matters where system calls are
// dear. The driver has no DSN option for PRAGMA mmap_size, so a connector
// runs it on every new connection; no driver is registered globally.
package sqlitemmap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// Open returns a pool over dsn (go-sqlite3's DSN syntax) whose connections
// map up to mmapBytes of the file.
func Open(dsn string, mmapBytes int64) *sql.DB {
	return sql.OpenDB(connector{dsn: dsn, mmap: mmapBytes})
}

type connector struct {
	dsn  string
	mmap int64
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.Driver().Open(c.dsn) }

func (c connector) Driver() driver.Driver {
	return &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		_, err := conn.Exec(fmt.Sprintf("PRAGMA mmap_size = %d", c.mmap), nil)
		return err
	}}
}
