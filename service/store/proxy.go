package store

import (
	"context"
	"database/sql"
	"errors"
)

// ProxyValue returns the per-install value name of the proxy runtime (a
// callback key, the local user id), creating it with gen() on first use.
// Concurrent first uses agree on one value: the first insert wins.
func (s *Store) ProxyValue(ctx context.Context, name string, gen func() string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM proxy_values WHERE name = ?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO proxy_values(name, value, created_at) VALUES (?,?,?) ON CONFLICT(name) DO NOTHING`, name, gen(), s.ts()); err != nil {
		return "", err
	}
	err = s.w.QueryRowContext(ctx, `SELECT value FROM proxy_values WHERE name = ?`, name).Scan(&v)
	return v, err
}
