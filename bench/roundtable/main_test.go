package main

import (
	"testing"
	"time"
)

// BenchmarkDeliberation reports the engine overhead beyond the critical
// path as overhead-ms/op (10 agents, 50 ms each).
func BenchmarkDeliberation(b *testing.B) {
	const delay = 50 * time.Millisecond
	agents, slow, stop := startAgents(10, delay)
	defer stop()
	var over time.Duration
	for b.Loop() {
		s, err := measure(agents, slow, delay, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		over += s.overhead[0]
	}
	b.ReportMetric(float64(over.Microseconds())/1000/float64(b.N), "overhead-ms/op")
}
