package callback_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"jarvis/service/callback"
	"jarvis/service/store"
)

// One id is fresh once per scope, stays claimed across a reopened store,
// and is forgotten after ReplayWindow.
func TestReplaysClaimOncePerScopeAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	open := func() *store.Store {
		st, err := store.Open(ctx, path, store.Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	r := callback.Replays{Store: st, Now: clock}
	claim := func(scope, id string) bool {
		t.Helper()
		dup, err := r.Claim(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		return dup
	}
	if claim(callback.ProxyScope("px"), "msg_1") {
		t.Fatal("a first delivery was taken for a replay")
	}
	if !claim(callback.ProxyScope("px"), "msg_1") {
		t.Fatal("a replay was taken for a first delivery")
	}
	if claim(callback.ProxyScope("other"), "msg_1") || claim("s_session", "msg_1") {
		t.Fatal("an id claimed in one scope was refused in another")
	}
	st.Close()

	st = open() // a restart
	defer st.Close()
	r.Store = st
	if !claim(callback.ProxyScope("px"), "msg_1") {
		t.Fatal("a restart forgot a claimed id")
	}
	now = now.Add(callback.ReplayWindow + time.Minute)
	if err := r.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if claim(callback.ProxyScope("px"), "msg_1") {
		t.Fatal("an id older than the replay window was still claimed after Prune")
	}
}
