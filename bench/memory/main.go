// Command memory benchmarks the memory package: index build time, Search
// latency against ripgrep over the same files and words, and how quickly an
// external edit becomes searchable. It measures the package call
// (Store.Search) and then the service's HTTP route (GET /v1/memory/search on
// the real jarvis-service binary, over the same workspace and index).
//
//	go run -tags sqlite_fts5 ./bench/memory -files 10000
//	go run -tags sqlite_fts5 ./bench/memory -stretch   # 100,000 files
//
// It prints a Markdown table (figure, memory, baseline, ratio, goal).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/memory"
)

func main() {
	files := flag.Int("files", 10000, "number of Markdown files to generate")
	stretch := flag.Bool("stretch", false, "use 100,000 files (overrides -files)")
	fileSize := flag.Int("size", 4096, "approximate bytes per file")
	queries := flag.Int("queries", 500, "Search queries to time")
	rgQueries := flag.Int("rg-queries", 40, "ripgrep runs to time (each scans every file)")
	edits := flag.Int("edits", 40, "external edits to time")
	dir := flag.String("dir", "", "workspace folder (default: a new temporary folder, removed afterwards)")
	seed := flag.Uint64("seed", 4, "random seed")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the two-common-word searches to this file")
	flag.Parse()
	cpuProfile = *cpuprofile
	if *stretch {
		*files = 100000
	}
	if err := run(*files, *fileSize, *queries, *rgQueries, *edits, *dir, *seed); err != nil {
		log.Fatal(err)
	}
}

type row struct{ figure, memory, baseline, ratio, goal, met string }

// cpuProfile, when set, is where the two-common-word searches' CPU profile goes.
var cpuProfile string

func run(nFiles, fileSize, nQueries, nRg, nEdits int, dir string, seed uint64) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "jarvis-memory-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := makeVocab(rng, 20000)
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))

	t0 := time.Now()
	corpusBytes, err := generate(dir, nFiles, fileSize, vocab, zipf, rng)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "generated %d files, %.1f MB in %v\n", nFiles, float64(corpusBytes)/1e6, time.Since(t0).Round(time.Millisecond))

	now := func() time.Time { return time.Date(2026, 2, 11, 12, 0, 0, 0, time.Local) }
	opts := memory.Options{Root: dir, Now: now}
	if os.Getenv("BENCH_DEBUG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	t0 = time.Now()
	s, err := memory.Open(ctx, opts)
	if err != nil {
		return err
	}
	build := time.Since(t0)
	s.Close()
	t0 = time.Now()
	if s, err = memory.Open(ctx, opts); err != nil {
		return err
	}
	reopen := time.Since(t0)
	defer s.Close()
	idx, _ := os.Stat(filepath.Join(dir, "memory-index.db"))
	fmt.Fprintf(os.Stderr, "index built in %v, reopened in %v\n", build.Round(time.Millisecond), reopen.Round(time.Millisecond))

	// Query words: content words of middling frequency (Zipf ranks
	// 200-5000), not the few hundred commonest that act as stop words.
	words := make([]string, nQueries)
	for i := range words {
		words[i] = vocab[200+rng.IntN(4800)]
	}
	pairs := make([]string, nQueries)
	for i := range pairs {
		pairs[i] = vocab[50+rng.IntN(1000)] + " " + vocab[50+rng.IntN(1000)]
	}
	for _, w := range words[:min(50, len(words))] { // warm caches
		s.Search(ctx, w, "", 10)
	}
	var lat1, lat2 []time.Duration
	hits := 0
	for _, w := range words {
		t := time.Now()
		res, err := s.Search(ctx, w, "", 10)
		lat1 = append(lat1, time.Since(t))
		if err != nil {
			return err
		}
		if len(res) > 0 {
			hits++
		}
	}
	for _, q := range pairs {
		t := time.Now()
		if _, err := s.Search(ctx, q, "", 10); err != nil {
			return err
		}
		lat2 = append(lat2, time.Since(t))
	}
	// Two common words (among the 40 commonest after the 10 commonest,
	// which act as stop words): each matches a large share of the notes,
	// so the ranking, not the index lookup, is what costs.
	common := make([]string, nQueries)
	for i := range common {
		common[i] = vocab[10+rng.IntN(40)] + " " + vocab[10+rng.IntN(40)]
	}
	var latC []time.Duration
	stop, err := startProfile(cpuProfile)
	if err != nil {
		return err
	}
	for _, q := range common {
		t := time.Now()
		if _, err := s.Search(ctx, q, "", 10); err != nil {
			return err
		}
		latC = append(latC, time.Since(t))
	}
	stop()
	// The baseline, in the same run: the same queries in blocks of 50,
	// alternately with the index's term counts and with them hidden, so
	// that jarvis_rank counts each word's matches at every search (as
	// before the counts were kept).
	latKept, latCounted, err := countsBaseline(ctx, s, filepath.Join(dir, "memory-index.db"), common)
	if err != nil {
		return err
	}

	// ripgrep: the same words over the same files, case-insensitive whole
	// words, every match with its line number (what a grep-based memory
	// search does), output discarded.
	var rgLat []time.Duration
	rgPath, rgErr := exec.LookPath("rg")
	if rgErr == nil {
		for _, w := range words[:min(nRg, len(words))] {
			cmd := exec.Command(rgPath, "-i", "-w", "-n", "-F", "--", w, filepath.Join(dir, "memory"))
			cmd.Stdout = io.Discard
			t := time.Now()
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
					return fmt.Errorf("rg: %w", err)
				}
			}
			rgLat = append(rgLat, time.Since(t))
		}
	}

	// External edits: append a line with a new word to a random file (as an
	// editor would), or replace the file by write-temp-then-rename, and poll
	// Search until it is found.
	var editLat, renameLat []time.Duration
	for i := 0; i < nEdits; i++ {
		rename := i%2 == 1
		rel := dailyName(rng.IntN(nFiles))
		token := fmt.Sprintf("zqxedit%dtoken", i)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		t := time.Now()
		if rename {
			old, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tmp := filepath.Join(filepath.Dir(p), ".edit.tmp")
			if err := os.WriteFile(tmp, append(old, []byte("\nEdited by rename: "+token+"\n")...), 0o600); err != nil {
				return err
			}
			if err := os.Rename(tmp, p); err != nil {
				return err
			}
		} else {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			f.WriteString("\nEdited in place: " + token + "\n")
			f.Close()
		}
		for {
			res, err := s.Search(ctx, token, "", 1)
			if err != nil {
				return err
			}
			if len(res) == 1 && res[0].Path == rel {
				break
			}
			if time.Since(t) > 10*time.Second {
				return fmt.Errorf("edit %d not searchable after 10 s", i)
			}
			time.Sleep(time.Millisecond)
		}
		if d := time.Since(t); d > 200*time.Millisecond {
			fmt.Fprintf(os.Stderr, "slow edit %d (rename=%v): %v\n", i, rename, d.Round(time.Millisecond))
		}
		if rename {
			renameLat = append(renameLat, time.Since(t))
		} else {
			editLat = append(editLat, time.Since(t))
		}
	}

	var writeLat []time.Duration
	for i := 0; i < 50; i++ {
		t := time.Now()
		if _, err := s.Write(ctx, "daily", fmt.Sprintf("Benchmark entry %d about %s and %s.", i, words[i%len(words)], vocab[i])); err != nil {
			return err
		}
		writeLat = append(writeLat, time.Since(t))
	}

	// The HTTP route: the real service on the same workspace (it reuses the
	// index, which one Store owns at a time), the same words.
	s.Close()
	httpLat, err := routeLatencies(ctx, dir, words)
	if err != nil {
		return err
	}
	hp50 := pct(httpLat, 50)

	p50, p95 := pct(lat1, 50), pct(lat1, 95)
	rows := []row{
		{"Index build (Open on an empty index)", dur(build), "", "", "< 5 s", ok(build < 5*time.Second)},
		{"Reopen, nothing changed (reconcile)", dur(reopen), "", "", "", ""},
		{"Search p50, 1 word", dur(p50), rgCell(rgLat, 50, rgErr), ratio(rgLat, 50, p50), "< 2 ms, >= 50x rg", ok(p50 < 2*time.Millisecond && len(rgLat) > 0 && pct(rgLat, 50) >= 50*p50)},
		{"Search p95, 1 word", dur(p95), rgCell(rgLat, 95, rgErr), ratio(rgLat, 95, p95), "", ""},
		{"GET /v1/memory/search p50, 1 word (real service, HTTP on loopback)", dur(hp50), rgCell(rgLat, 50, rgErr), ratio(rgLat, 50, hp50), "< 2 ms, >= 50x rg", ok(hp50 < 2*time.Millisecond && len(rgLat) > 0 && pct(rgLat, 50) >= 50*hp50)},
		{"GET /v1/memory/search p95, 1 word", dur(pct(httpLat, 95)), rgCell(rgLat, 95, rgErr), ratio(rgLat, 95, pct(httpLat, 95)), "", ""},
		{"Search p50, 2 words", dur(pct(lat2, 50)), "", "", "", ""},
		{"Search p95, 2 words", dur(pct(lat2, 95)), "", "", "", ""},
		{"Search p50, 2 common words (rg: its 1-word run, reading every file)", dur(pct(latC, 50)), rgCell(rgLat, 50, rgErr), ratio(rgLat, 50, pct(latC, 50)), "< 20 ms", ok(pct(latC, 50) < 20*time.Millisecond)},
		{"Search p95, 2 common words", dur(pct(latC, 95)), "", "", "", ""},
		{"Search p50, 2 common words, interleaved: term counts kept (baseline: each word's matches counted at every search)", dur(pct(latKept, 50)), dur(pct(latCounted, 50)), fmt.Sprintf("%.2fx", float64(pct(latCounted, 50))/float64(max(1, pct(latKept, 50)))), "< 20 ms", ok(pct(latKept, 50) < 20*time.Millisecond)},
		{"Search p95, 2 common words, interleaved (same)", dur(pct(latKept, 95)), dur(pct(latCounted, 95)), fmt.Sprintf("%.2fx", float64(pct(latCounted, 95))/float64(max(1, pct(latKept, 95)))), "", ""},
		{"External edit searchable, p50 (in place)", dur(pct(editLat, 50)), "", "", "< 500 ms", ok(pct(editLat, 50) < 500*time.Millisecond)},
		{"External edit searchable, p95 (in place)", dur(pct(editLat, 95)), "", "", "< 500 ms", ok(pct(editLat, 95) < 500*time.Millisecond)},
		{"External edit searchable, p50 (write temp + rename)", dur(pct(renameLat, 50)), "", "", "< 500 ms", ok(pct(renameLat, 50) < 500*time.Millisecond)},
		{"External edit searchable, p95 (write temp + rename)", dur(pct(renameLat, 95)), "", "", "< 500 ms", ok(pct(renameLat, 95) < 500*time.Millisecond)},
		{"External edit searchable, max (all edits)", dur(max(pct(editLat, 100), pct(renameLat, 100))), "", "", "", ""},
		{"Write (append + fsync + index), p50", dur(pct(writeLat, 50)), "", "", "", ""},
	}
	fmt.Printf("Corpus: %d files, %.1f MB of Markdown (~%d B each); index %.1f MB; %d one-word queries (%d%% with hits), %d two-word, %d rg runs; GOMAXPROCS=%d, %s/%s.\n\n",
		nFiles, float64(corpusBytes)/1e6, fileSize, float64(idx.Size())/1e6, len(lat1), 100*hits/max(1, len(lat1)), len(lat2), len(rgLat), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Println("| Figure | memory.Store | Baseline (rg) | Ratio | Goal | Met |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.figure, r.memory, r.baseline, r.ratio, r.goal, r.met)
	}
	return nil
}

// countsBaseline times queries in blocks of 50, each block once as the
// index is and once with its table of term counts (chunk_terms) renamed
// away, which makes jarvis_rank count each query word's matches instead
// (memory/rank.go). The table is renamed back before it returns.
func countsBaseline(ctx context.Context, s *memory.Store, index string, queries []string) (kept, counted []time.Duration, err error) {
	db, err := sql.Open("sqlite3", index+"?_busy_timeout=5000")
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	hide := func(from, to string) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE `+from+` RENAME TO `+to)
		return err
	}
	for i := 0; i < len(queries); i += 50 {
		block := queries[i:min(i+50, len(queries))]
		for _, hidden := range []bool{false, true} {
			if hidden {
				if err := hide("chunk_terms", "chunk_terms_hidden"); err != nil {
					return nil, nil, err
				}
			}
			for _, q := range block {
				t := time.Now()
				_, err := s.Search(ctx, q, "", 10)
				d := time.Since(t)
				if err != nil {
					if hidden {
						hide("chunk_terms_hidden", "chunk_terms")
					}
					return nil, nil, err
				}
				if hidden {
					counted = append(counted, d)
				} else {
					kept = append(kept, d)
				}
			}
			if hidden {
				if err := hide("chunk_terms_hidden", "chunk_terms"); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return kept, counted, nil
}

func ok(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func rgCell(l []time.Duration, p float64, err error) string {
	if err != nil {
		return "rg not installed"
	}
	return dur(pct(l, p))
}

func ratio(base []time.Duration, p float64, ours time.Duration) string {
	if len(base) == 0 || ours == 0 {
		return ""
	}
	return fmt.Sprintf("%.0fx", float64(pct(base, p))/float64(ours))
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func makeVocab(rng *rand.Rand, n int) []string {
	syl := []string{"ka", "lo", "mi", "ra", "te", "su", "no", "be", "da", "fi", "gu", "ho", "ji", "ke", "lu", "ma", "ne", "po", "ri", "sa", "to", "vu", "we", "yo", "zi", "an", "el", "on", "ur", "is"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		k := 2 + rng.IntN(3)
		var b strings.Builder
		for i := 0; i < k; i++ {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func dailyName(i int) string {
	d := time.Date(2026, 2, 11, 0, 0, 0, 0, time.Local).AddDate(0, 0, -i)
	return "memory/" + d.Format("2006-01-02") + ".md"
}

// generate writes n daily notes of about size bytes each: a title, then
// sections of paragraphs, lists and the odd code block.
func generate(root string, n, size int, vocab []string, zipf *rand.Zipf, rng *rand.Rand) (int64, error) {
	var total int64
	sentence := func(b *strings.Builder, words int) {
		for i := 0; i < words; i++ {
			w := vocab[zipf.Uint64()]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
	}
	for i := 0; i < n; i++ {
		rel := dailyName(i)
		var b strings.Builder
		b.WriteString("# " + strings.TrimSuffix(filepath.Base(rel), ".md") + "\n\n")
		for b.Len() < size {
			b.WriteString("## " + vocab[zipf.Uint64()] + " " + vocab[zipf.Uint64()] + "\n\n")
			switch rng.IntN(6) {
			case 0:
				for k := 0; k < 3+rng.IntN(4); k++ {
					b.WriteString("- ")
					sentence(&b, 4+rng.IntN(8))
					b.WriteString("\n")
				}
			case 1:
				b.WriteString("```\n")
				for k := 0; k < 3; k++ {
					b.WriteString(vocab[zipf.Uint64()] + "(" + vocab[zipf.Uint64()] + ")\n")
				}
				b.WriteString("```\n")
			default:
				for k := 0; k < 2+rng.IntN(3); k++ {
					sentence(&b, 6+rng.IntN(12))
					if rng.IntN(3) == 0 {
						b.WriteString("\n")
					}
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		p := filepath.Join(root, filepath.FromSlash(rel))
		if i == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return 0, err
			}
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			return 0, err
		}
		total += int64(b.Len())
	}
	return total, nil
}

// routeLatencies starts jarvis-service on the workspace dir and times
// GET /v1/memory/search for each word.
func routeLatencies(ctx context.Context, dir string, words []string) ([]time.Duration, error) {
	bin, err := proc.BuildService(dir)
	if err != nil {
		return nil, err
	}
	svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--trust-config", "--config", filepath.Join(dir, "none.json"), "--log-level", "warn"},
		[]string{"JARVIS_TOKEN=bench-token"}, true)
	if err != nil {
		return nil, err
	}
	defer svc.Kill()
	c := api.NewClient(svc.URL, "bench-token", nil)
	search := func(w string) error {
		var r api.MemorySearchResponse
		return c.Do(ctx, "GET", "/v1/memory/search?limit=10&q="+url.QueryEscape(w), nil, &r)
	}
	for _, w := range words[:min(50, len(words))] { // warm up connections and caches
		if err := search(w); err != nil {
			return nil, err
		}
	}
	var lat []time.Duration
	for _, w := range words {
		t := time.Now()
		if err := search(w); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

// startProfile starts a CPU profile into path (none when path is empty) and
// returns what stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
