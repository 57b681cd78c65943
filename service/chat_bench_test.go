package service_test

import (
	"context"
	"testing"
)

// BenchmarkChatNonStream is a non-streamed turn in process (for profiles;
// bench/service measures the real binary against the upstream alone).
func BenchmarkChatNonStream(b *testing.B) {
	e := newEnvB(b)
	sid := e.session("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%50 == 0 {
			sid = e.session("bench" + string(rune('a'+i/50%26)) + string(rune('a'+i/1300)))
		}
		if _, err := e.c.Chat(context.Background(), sid, "hello"); err != nil {
			b.Fatal(err)
		}
	}
}
