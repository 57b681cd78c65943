//go:build sqlite_fts5

package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// BenchmarkReindexNote measures storing one ~4 KB note again after an
// edit (a line appended, or the whole note rewritten), in one transaction
// as the watcher's re-index does, with chunk_terms kept and, in the same
// run, without: the cost the term counts add to a write.
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
	texts := map[string]string{}
	for i := 0; i < 500; i++ {
		rel := fmt.Sprintf("memory/n%05d.md", i)
		texts[rel] = note()
		writeFile(b, root, rel, texts[rel])
	}
	s := openStore(b, root, func(o *Options) { o.DisableWatcher = true })
	ctx := context.Background()
	for _, edit := range []string{"append", "rewrite"} {
		b.Run(edit, func(b *testing.B) {
			var kept, without []time.Duration
			for i := 0; i < b.N; i++ {
				// Alternately, so that both see the index grow alike.
				count := i%2 == 0
				rel := fmt.Sprintf("memory/n%05d.md", i%500)
				if edit == "append" {
					texts[rel] += fmt.Sprintf("\nw%d w%d w%d\n", rng.IntN(20000), rng.IntN(20000), rng.IntN(20000))
				} else {
					texts[rel] = note()
				}
				p := parsed{rel: rel, hash: hashOf([]byte(texts[rel])), chunks: chunkLines(splitLines(texts[rel]))}
				p.fi = fakeInfo{size: int64(len(texts[rel]))}
				t := time.Now()
				tx, err := s.wdb.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := storeParsedTx(ctx, tx, []parsed{p}, count); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				if count {
					kept = append(kept, time.Since(t))
				} else {
					without = append(without, time.Since(t))
				}
			}
			median := func(d []time.Duration) float64 {
				if len(d) == 0 {
					return 0
				}
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds())
			}
			b.ReportMetric(median(kept), "µs-p50-counts-kept")
			b.ReportMetric(median(without), "µs-p50-without-counts")
		})
	}
}

// fakeInfo is the file info storeParsedTx records for a note not written
// to disk.
type fakeInfo struct{ size int64 }

func (f fakeInfo) Name() string       { return "" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() os.FileMode  { return 0o600 }
func (f fakeInfo) ModTime() time.Time { return time.Unix(0, 0) }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }
