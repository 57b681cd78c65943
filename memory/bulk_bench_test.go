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

// BenchmarkReindexNote measures re-indexing one ~4 KB note after an edit
// (what the watcher does), with the triggers keeping chunk_terms and,
// in the same run, with the triggers as they were before (the full-text
// index only): the cost the term counts add to every write.
func BenchmarkReindexNote(b *testing.B) {
	root := b.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	note := func() string {
		var sb strings.Builder
		for sb.Len() < 4000 {
			fmt.Fprintf(&sb, "## heading %d\n\n", rng.IntN(1000))
			for k := 0; k < 40; k++ {
				fmt.Fprintf(&sb, "w%d ", rng.IntN(20000))
			}
			sb.WriteString("\n\n")
		}
		return sb.String()
	}
	for i := 0; i < 500; i++ {
		writeFile(b, root, fmt.Sprintf("memory/n%05d.md", i), note())
	}
	s := openStore(b, root, func(o *Options) { o.DisableWatcher = true })
	ctx := context.Background()
	for _, mode := range []string{"counts kept", "full-text index only"} {
		if mode == "full-text index only" {
			for _, q := range []string{`DROP TRIGGER chunks_ai`, `DROP TRIGGER chunks_ad`,
				`CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text); END`,
				`CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text); END`} {
				if _, err := s.wdb.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rel := fmt.Sprintf("memory/n%05d.md", i%500)
				b.StopTimer()
				writeFile(b, root, rel, note())
				b.StartTimer()
				if err := s.syncLocked(ctx, rel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
