package audit

import (
	"context"
	"sync"
)

// CheckpointSlot carries the checkpoint an executor took before changing
// files to the audit row the gate writes for the call: the gate puts a slot
// in the context it runs the call with, the executor fills it.
type CheckpointSlot struct {
	mu  sync.Mutex
	ref string
}

type slotKey struct{}

// WithCheckpointSlot returns ctx with a new, empty slot.
func WithCheckpointSlot(ctx context.Context) (context.Context, *CheckpointSlot) {
	s := &CheckpointSlot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

// SetCheckpoint records ref in ctx's slot; without a slot it does nothing.
func SetCheckpoint(ctx context.Context, ref string) {
	if s, ok := ctx.Value(slotKey{}).(*CheckpointSlot); ok {
		s.mu.Lock()
		s.ref = ref
		s.mu.Unlock()
	}
}

// Ref is the recorded checkpoint, "" when none was taken.
func (s *CheckpointSlot) Ref() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ref
}
