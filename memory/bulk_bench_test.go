//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkOpenBuild measures a full index build of 2,000 ~4 KB notes.
// (bench/memory measures the 10,000-file figures against ripgrep.)
func BenchmarkOpenBuild(b *testing.B) {
	root := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for sb.Len() < 4000 {
			fmt.Fprintf(&sb, "## heading %d\n\n", rng.IntN(1000))
			for k := 0; k < 40; k++ {
				fmt.Fprintf(&sb, "w%d ", rng.IntN(20000))
			}
			sb.WriteString("\n\n")
		}
		p := filepath.Join(root, "memory", fmt.Sprintf("n%05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(sb.String()), 0o600)
		os.Chtimes(p, old, old)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.Remove(filepath.Join(root, "memory-index.db"))
		os.Remove(filepath.Join(root, "memory-index.db-wal"))
		os.Remove(filepath.Join(root, "memory-index.db-shm"))
		s, err := Open(context.Background(), Options{Root: root, DisableWatcher: true})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
