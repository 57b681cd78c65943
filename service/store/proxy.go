package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ProxyValue returns the per-install value name of the proxy runtime (the
// local user id), creating it with gen() on first use.
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

// ProxyCall is the call a proxy callback token was made for.
type ProxyCall struct {
	AgentID, SessionID, CallID string
	ExpiresAt                  string
}

// AddProxyCallToken records the hash of a call's callback token, valid
// until expires; expired tokens are removed on the way.
func (s *Store) AddProxyCallToken(ctx context.Context, tokenHash string, c ProxyCall, expires time.Time) error {
	now := s.ts()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM proxy_callback_tokens WHERE expires_at < ?`, now); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO proxy_callback_tokens(token_hash, agent_id, session_id, call_id, expires_at, created_at) VALUES (?,?,?,?,?,?)`,
		tokenHash, c.AgentID, c.SessionID, c.CallID, Timestamp(expires), now)
	return err
}

// ProxyCallToken returns the unexpired call a token hash was made for, or
// ErrNotFound.
func (s *Store) ProxyCallToken(ctx context.Context, tokenHash string) (ProxyCall, error) {
	var c ProxyCall
	err := s.r.QueryRowContext(ctx, `SELECT agent_id, session_id, call_id, expires_at FROM proxy_callback_tokens WHERE token_hash = ? AND expires_at >= ?`,
		tokenHash, s.ts()).Scan(&c.AgentID, &c.SessionID, &c.CallID, &c.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	return c, err
}

// ProxyCallGiven reports whether the agent was given the call in the
// session (a token made for it has not expired).
func (s *Store) ProxyCallGiven(ctx context.Context, agentID, sessionID, callID string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM proxy_callback_tokens WHERE agent_id = ? AND session_id = ? AND call_id = ? AND expires_at >= ?`,
		agentID, sessionID, callID, s.ts()).Scan(&n)
	return n > 0, err
}
