package store

import (
	"context"
	"database/sql"
	"strings"
)

// Callback delivery ids (webhook-id, Idempotency-Key), the one replay
// protection of the agents that call the service back (package callback):
// an id is claimed once per scope, in the table external_deliveries, whose
// session_id column holds the scope (an external agent's session id; a
// proxy agent's "proxy:<agentId>", which no session id can be, since they
// have no colon). Kept in the database, so that a restart does not reopen
// the replay window.

// claimDelivery claims id in scope (within a transaction, or on its own);
// ErrDuplicateDelivery when it was claimed before.
func claimDelivery(ctx context.Context, ex interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, scope, id, now string) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO external_deliveries(session_id, delivery_id, seen_at) VALUES (?,?,?)`, scope, id, now)
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return ErrDuplicateDelivery
	}
	return err
}

// ClaimDelivery claims id in scope on its own; ErrDuplicateDelivery when it
// was claimed before. ExternalInject claims within the write it applies.
func (s *Store) ClaimDelivery(ctx context.Context, scope, id string) error {
	return claimDelivery(ctx, s.w, scope, id, s.ts())
}

// PruneDeliveries forgets delivery ids claimed before the given time.
func (s *Store) PruneDeliveries(ctx context.Context, before string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM external_deliveries WHERE seen_at < ?`, before)
	return err
}
