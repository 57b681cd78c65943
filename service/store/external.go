package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrDuplicateDelivery is returned by the write of ExternalInject when the
// reply's delivery id was already applied to the session.
var ErrDuplicateDelivery = errors.New("delivery already applied")

// AddExternalToken records the hash of a session's callback token.
func (s *Store) AddExternalToken(ctx context.Context, sessionID, tokenHash string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO external_tokens(token_hash, session_id, created_at) VALUES (?,?,?) ON CONFLICT(token_hash) DO NOTHING`,
		tokenHash, sessionID, s.ts())
	return err
}

// ExternalCallbackTarget returns the session a callback names and the
// session its token belongs to ("" when the token is unknown or revoked),
// in one read: the callback path runs it for every reply.
func (s *Store) ExternalCallbackTarget(ctx context.Context, sessionID, tokenHash string) (Session, string, error) {
	var sess Session
	var owner string
	err := s.r.QueryRowContext(ctx, `SELECT `+sessionCols+`, COALESCE((SELECT session_id FROM external_tokens WHERE token_hash = ?), '') FROM sessions WHERE id = ?`, tokenHash, sessionID).
		Scan(&sess.ID, &sess.JarvisSessionID, &sess.AgentID, &sess.Name, &sess.Attributes, &sess.LastSnippet, &sess.PinnedAt, &sess.CreatedAt, &sess.UpdatedAt, &sess.DeletedAt, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return sess, "", ErrNotFound
	}
	return sess, owner, err
}

// ExternalTokenSession returns the session a callback token hash belongs to,
// or ErrNotFound (unknown, or revoked by the session's deletion).
func (s *Store) ExternalTokenSession(ctx context.Context, tokenHash string) (string, error) {
	var sid string
	err := s.r.QueryRowContext(ctx, `SELECT session_id FROM external_tokens WHERE token_hash = ?`, tokenHash).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return sid, err
}

// ExternalTurnStartSeq returns the seq of the user.message event that started a turn.
func (s *Store) ExternalTurnStartSeq(ctx context.Context, sessionID, turnID string) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, `SELECT seq FROM events WHERE session_id = ? AND type = 'user.message' AND json_extract(data, '$.turn_id') = ? ORDER BY seq DESC LIMIT 1`,
		sessionID, turnID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("start of turn %s: %w", turnID, ErrNotFound)
	}
	return seq, err
}

// ExternalAudit is one audit row of an external callback.
type ExternalAudit struct {
	SessionID  string
	AgentID    string
	Bytes      int64
	Auth       string // token | signature | none | failed
	Accepted   bool
	Reason     string
	DeliveryID string
	MessageID  int64  // 0 when nothing was stored
	Sanitized  string // JSON, or ""
	CreatedAt  string
	// Attempts is how many callbacks the row stands for: 1, or more for
	// the aggregate of rejected ones in a window (Bytes is then their sum).
	Attempts int64
}

func insertAudit(ctx context.Context, ex execer, a ExternalAudit) error {
	var mid any
	if a.MessageID != 0 {
		mid = a.MessageID
	}
	_, err := ex.ExecContext(ctx, `INSERT INTO external_audit(session_id, agent_id, bytes, auth, accepted, reason, delivery_id, message_id, sanitized, created_at, attempts) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		a.SessionID, a.AgentID, a.Bytes, a.Auth, a.Accepted, a.Reason, a.DeliveryID, mid, a.Sanitized, a.CreatedAt, max(a.Attempts, 1))
	return err
}

// AddExternalAudit stores the audit row of a callback that stored nothing.
func (s *Store) AddExternalAudit(ctx context.Context, a ExternalAudit) error {
	a.CreatedAt = s.ts()
	return insertAudit(ctx, s.w, a)
}

// AddExternalAudits stores several such rows in one transaction.
func (s *Store) AddExternalAudits(ctx context.Context, as []ExternalAudit) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := s.ts()
	for _, a := range as {
		a.CreatedAt = now
		if err := insertAudit(ctx, tx, a); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// PruneExternalAudit deletes the oldest external_audit rows beyond the
// newest keep, except each agent's newest accepted row (its last callback
// time), and returns how many it deleted.
func (s *Store) PruneExternalAudit(ctx context.Context, keep int) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM external_audit
		WHERE id <= (SELECT id FROM external_audit ORDER BY id DESC LIMIT 1 OFFSET ?)
		AND id NOT IN (SELECT max(id) FROM external_audit WHERE accepted = 1 GROUP BY agent_id)`, keep)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ExternalAudits returns a session's audit rows in order (for tests and tools; not indexed).
func (s *Store) ExternalAudits(ctx context.Context, sessionID string) ([]ExternalAudit, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session_id, agent_id, bytes, auth, accepted, reason, delivery_id, COALESCE(message_id, 0), sanitized, created_at, attempts
		FROM external_audit WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExternalAudit
	for rows.Next() {
		var a ExternalAudit
		if err := rows.Scan(&a.SessionID, &a.AgentID, &a.Bytes, &a.Auth, &a.Accepted, &a.Reason, &a.DeliveryID, &a.MessageID, &a.Sanitized, &a.CreatedAt, &a.Attempts); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ExternalInjection is an assistant message an external agent posted.
type ExternalInjection struct {
	Message    *Message // stored; its ID and CreatedAt are set by the write
	DeliveryID string   // "" when the agent sent none
	Audit      ExternalAudit
	Snippet    string
}

// ExternalInject returns the write that applies an injected reply: it
// claims the delivery id (ErrDuplicateDelivery when already applied), stores
// the message and its audit row, advances the session and the agent's last
// callback time (its audit row). Run it with the reply's event (events.Hub.PublishWith) so
// that the message is stored exactly when the event is.
func (s *Store) ExternalInject(in ExternalInjection) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		now := s.ts()
		if in.DeliveryID != "" {
			if err := claimDelivery(ctx, tx, in.Message.SessionID, in.DeliveryID, now); err != nil {
				return err
			}
		}
		in.Message.CreatedAt = now
		if err := s.addMessage(ctx, tx, in.Message); err != nil {
			return err
		}
		a := in.Audit
		a.MessageID, a.Accepted, a.CreatedAt = in.Message.ID, true, now
		if err := insertAudit(ctx, tx, a); err != nil {
			return err
		}
		return s.touch(ctx, tx, in.Message.SessionID, in.Snippet, now)
	}
}

// ExternalAgentStatus is an external agent's last forward and callback.
type ExternalAgentStatus struct {
	LastForwardAt     string
	LastForwardOK     bool
	LastForwardDetail string
	LastCallbackAt    string
}

// SetExternalForward records the result of an agent's last forward.
func (s *Store) SetExternalForward(ctx context.Context, agentID string, ok bool, detail string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO external_agent_status(agent_id, last_forward_at, last_forward_ok, last_forward_detail) VALUES (?,?,?,?)
		ON CONFLICT(agent_id) DO UPDATE SET last_forward_at = excluded.last_forward_at, last_forward_ok = excluded.last_forward_ok, last_forward_detail = excluded.last_forward_detail`,
		agentID, s.ts(), ok, detail)
	return err
}

// ExternalAgentStatus returns an agent's status; the zero value when it has none.
func (s *Store) ExternalAgentStatus(ctx context.Context, agentID string) (ExternalAgentStatus, error) {
	var st ExternalAgentStatus
	err := s.r.QueryRowContext(ctx, `SELECT last_forward_at, last_forward_ok, last_forward_detail FROM external_agent_status WHERE agent_id = ?`, agentID).
		Scan(&st.LastForwardAt, &st.LastForwardOK, &st.LastForwardDetail)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, err
	}
	err = s.r.QueryRowContext(ctx, `SELECT created_at FROM external_audit WHERE agent_id = ? AND accepted = 1 ORDER BY id DESC LIMIT 1`, agentID).Scan(&st.LastCallbackAt)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	return st, err
}
