package service_test

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkChatNonStream is a non-streamed turn in process (for profiles;
// bench/service measures the real binary against the upstream alone).
func BenchmarkChatNonStream(b *testing.B) {
	e := newEnvB(b)
	sids := make([]string, b.N)
	for i := range sids {
		// A fresh session for every turn, as bench/service does.
		sids[i] = e.session(fmt.Sprintf("bench-%d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.c.Chat(context.Background(), sids[i], "hello"); err != nil {
			b.Fatal(err)
		}
	}
}
