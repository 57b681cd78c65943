package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The exact vector scan at the size of bench/memeval's year of notes
// (16,465 chunks), for common embedding sizes:
//
//	go test -tags sqlite_fts5 -run - -bench VectorScan ./memory
func BenchmarkVectorScan(b *testing.B) {
	for _, dim := range []int{256, 768, 1024} {
		b.Run(fmt.Sprint(dim), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			idx := &vecIndex{}
			vec := func() []float32 {
				v := make([]float32, dim)
				for i := range v {
					v[i] = rng.Float32() - 0.5
				}
				return normalize(v)
			}
			for i := range 16465 {
				idx.add(int64(i), vec())
			}
			q := vec()
			b.ResetTimer()
			for b.Loop() {
				if len(idx.top(q, vectorPool)) != vectorPool {
					b.Fatal("short result")
				}
			}
		})
	}
}
