package testwait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t, "three increments", 5*time.Second, func() bool { return n.Load() == 3 })
}

// fatalRecorder is a testing.TB whose Fatalf ends the waiting goroutine
// and records the message.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestUntilFailsSayingWhatNeverHappened(t *testing.T) {
	f := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != f {
				t.Fatalf("Until did not fail the test: %v", r)
			}
		}()
		Until(f, "something", 30*time.Millisecond, func() bool { return false })
	}()
	if f.msg == "" {
		t.Fatal("no failure message")
	}
}
