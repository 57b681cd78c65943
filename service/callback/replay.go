package callback

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"jarvis/service/store"
)

// ReplayWindow is how long a delivery id is remembered. A signed delivery
// older than the signature's tolerance (webhook.Window) is refused anyway;
// ids sent with a token alone are remembered this long.
const ReplayWindow = 24 * time.Hour

// Replays is the one replay protection of callbacks, for external agents
// (a delivery id per session, claimed with the reply it carries:
// store.ExternalInject) and proxy agents (a webhook-id per agent, Claim).
// The ids are kept in the store, so a restart does not reopen the window.
type Replays struct {
	Store *store.Store
	Now   func() time.Time

	lastPrune atomic.Int64 // unix seconds of the last PruneNow
}

// ProxyScope is the scope of a proxy agent's webhook ids.
func ProxyScope(agentID string) string { return "proxy:" + agentID }

// Claim records id in scope and reports whether it was claimed before
// (a replay).
func (r *Replays) Claim(ctx context.Context, scope, id string) (replayed bool, err error) {
	err = r.Store.ClaimDelivery(ctx, scope, id)
	if errors.Is(err, store.ErrDuplicateDelivery) {
		return true, nil
	}
	if err == nil {
		err = r.Prune(ctx)
	}
	return false, err
}

// Prune forgets the ids claimed more than ReplayWindow ago, at most every
// 10 minutes (a claim calls it; so does the external runtime's pruning).
func (r *Replays) Prune(ctx context.Context) error {
	now := r.Now().Unix()
	last := r.lastPrune.Load()
	if now-last < 600 || !r.lastPrune.CompareAndSwap(last, now) {
		return nil
	}
	return r.Store.PruneDeliveries(ctx, store.Timestamp(r.Now().Add(-ReplayWindow)))
}
