// Package testwait is the one way tests wait for something another
// goroutine or process does: poll a condition until it holds, or fail the
// test saying what never happened. Tests never sleep to prove that
// something did not happen; they wait for an event that comes after it.
package testwait

import (
	"testing"
	"time"
)

// poll is how often the condition is checked.
const poll = 10 * time.Millisecond

// Until checks cond until it holds and fails tb (saying what it waited
// for) when it still does not after within.
func Until(tb testing.TB, what string, within time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(poll)
	}
}
