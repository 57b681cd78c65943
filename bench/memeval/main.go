// Command memeval measures how well memory search answers questions, in the
// style of LongMemEval: it generates a deterministic year of daily notes
// with 150 questions whose answer is one line (corpus.go), opens a
// memory.Store over them and asks each question through Store.Search, then
// runs the same questions through a ripgrep baseline over the same files.
//
//	go run -tags sqlite_fts5 ./bench/memeval
//	go run -tags sqlite_fts5 ./bench/memeval -embed scripted   # with the scripted embedding server
//	go run -tags sqlite_fts5 ./bench/memeval -embed http://127.0.0.1:11434/v1 -embed-model nomic-embed-text
//
// It prints, per question kind, Recall@1, Recall@5 and MRR (over the top 10)
// and the median and 95th-percentile search latency; for knowledge-update
// questions also how often an older, replaced statement ranks above the
// newest one.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"net/http/httptest"

	"jarvis/internal/embedpeer"
	"jarvis/memory"
	"jarvis/memory/wordnet"
	"jarvis/service/llm"
)

func main() {
	seed := flag.Uint64("seed", 32, "corpus seed")
	which := flag.String("corpus", "diary", `corpus generator: "diary" (corpus.go, the one the ranking rules were tuned on) or "ledger" (ledger.go, written independently, not tuned on)`)
	perDay := flag.Int("per-day", 45, "entries per daily note")
	dir := flag.String("dir", "", "workspace folder (default: a new temporary folder, removed afterwards)")
	marks := flag.Bool("marks", false, "also mark replaced statements as superseded (what memory_write's replaces does) and measure again")
	rg := flag.Bool("rg", true, "run the ripgrep baseline")
	verbose := flag.Bool("v", false, "print each missed question")
	only := flag.String("q", "", "only print this question's top 50 (debugging)")
	embed := flag.String("embed", "", `embedding server: "scripted" (internal/embedpeer, not a real model) or an OpenAI-compatible base URL`)
	embedModel := flag.String("embed-model", "scripted-concepts-256", "embedding model name")
	embedKey := flag.String("embed-key-env", "", "environment variable holding the embedding server's API key, if it needs one")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the memory searches to this file")
	flag.Parse()
	cfg := config{corpus: *which, seed: *seed, perDay: *perDay, dir: *dir, marks: *marks, rg: *rg, verbose: *verbose, only: *only,
		embedURL: *embed, embedModel: *embedModel, embedKey: os.Getenv(*embedKey), cpuprofile: *cpuprofile}
	if err := run(context.Background(), cfg); err != nil {
		log.Fatal(err)
	}
}

type config struct {
	corpus    string
	seed      uint64
	perDay    int
	dir       string
	marks, rg bool
	verbose   bool
	only      string

	embedURL, embedModel, embedKey string
	cpuprofile                     string
}

func run(ctx context.Context, cfg config) error {
	dir := cfg.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "jarvis-memeval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	gen := corpus
	switch cfg.corpus {
	case "diary", "":
	case "ledger":
		gen = ledger
	default:
		return fmt.Errorf("-corpus %q: want diary or ledger", cfg.corpus)
	}
	qs, size, err := gen(dir, cfg.seed, cfg.perDay)
	if err != nil {
		return err
	}
	now := func() time.Time { return time.Date(year+1, 1, 1, 12, 0, 0, 0, time.Local) }
	opts := memory.Options{Root: dir, Now: now, DisableWatcher: true}
	if cfg.embedURL == "scripted" {
		wn, err := wordnet.Open(wordnet.DefaultDir)
		if err != nil {
			return err
		}
		defer wn.Close()
		srv := httptest.NewServer(embedpeer.New(wn, 256))
		defer srv.Close()
		cfg.embedURL = srv.URL + "/v1"
	}
	if cfg.embedURL != "" {
		opts.Embedder = llm.NewEmbedder(llm.OpenAIOptions{BaseURL: cfg.embedURL, APIKey: cfg.embedKey}, cfg.embedModel)
	}
	t0 := time.Now()
	s, err := memory.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Embedder != nil {
		for {
			st := s.EmbeddingStatus()
			if st.Error != "" {
				return fmt.Errorf("embeddings: %s", st.Error)
			}
			if st.Total > 0 && st.Embedded == st.Total {
				fmt.Printf("embeddings: %d chunks with %s in %v\n", st.Total, st.Model, time.Since(t0).Round(time.Millisecond))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	fmt.Printf("retrieval: %s\n", s.Retrieval())
	st, err := s.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("corpus: %s, %d files, %.1f MB, %d chunks, seed %d; index built in %v\n\n",
		cfg.corpus, st.Files, float64(size)/1e6, st.Chunks, cfg.seed, time.Since(t0).Round(time.Millisecond))

	if cfg.only != "" {
		for _, q := range qs {
			if q.Q == cfg.only {
				fmt.Printf("gold %s:%d, older %v\n", q.Path, q.Line, q.Older)
			}
		}
		res, err := s.Search(ctx, cfg.only, "", 50)
		for i, r := range res {
			fmt.Printf("%d. %s:%d %q\n", i+1, r.Path, r.LineStart, r.Excerpt)
		}
		return err
	}
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		for range 5 {
			if _, err := evalMemory(ctx, s, qs, false); err != nil {
				return err
			}
		}
		pprof.StopCPUProfile()
		f.Close()
	}
	res, err := evalMemory(ctx, s, qs, cfg.verbose)
	if err != nil {
		return err
	}
	fmt.Println("| search | kind | Recall@1 | Recall@5 | MRR | p50 | p95 | older above newest |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	res.print("memory")
	if cfg.marks {
		for _, q := range qs {
			for _, o := range q.Older {
				if err := supersede(ctx, s, o, q); err != nil {
					return err
				}
			}
		}
		// Each mark is a write; let the store merge the index segments
		// they left (memory's mergeLoop, every 2 s) as it does between a
		// user's writes, so that this measures search, not the backlog.
		time.Sleep(5 * time.Second)
		res, err := evalMemory(ctx, s, qs, cfg.verbose)
		if err != nil {
			return err
		}
		res.print("memory, replaced lines marked")
	}
	if cfg.rg {
		res, err := evalRipgrep(ctx, dir, qs)
		if err != nil {
			return err
		}
		res.print("ripgrep")
	}
	return nil
}

// score is the per-kind outcome.
type score struct {
	n, at1, at5, olderAbove int
	rr                      float64
	lat                     []time.Duration
}

type results struct {
	kinds []string
	by    map[string]*score
}

func newResults() results {
	return results{kinds: []string{"keyword", "paraphrase", "update"}, by: map[string]*score{"keyword": {}, "paraphrase": {}, "update": {}}}
}

// add records one question's ranked hits (path and line range each).
func (r results) add(q question, hits []span, took time.Duration) (rank int) {
	sc := r.by[q.Kind]
	sc.n++
	sc.lat = append(sc.lat, took)
	rank = 0
	for i, h := range hits {
		if h.covers(q.Path, q.Line) {
			rank = i + 1
			break
		}
	}
	if rank == 1 {
		sc.at1++
	}
	if rank >= 1 && rank <= 5 {
		sc.at5++
	}
	if rank > 0 {
		sc.rr += 1 / float64(rank)
	}
	if olderFirst(q, hits) {
		sc.olderAbove++
	}
	return rank
}

func (r results) print(name string) {
	for _, k := range r.kinds {
		sc := r.by[k]
		if sc.n == 0 {
			continue
		}
		slices.Sort(sc.lat)
		n := float64(sc.n)
		older := "-"
		if k == "update" {
			older = fmt.Sprintf("%.0f%%", 100*float64(sc.olderAbove)/n)
		}
		fmt.Printf("| %s | %s | %.2f | %.2f | %.3f | %s | %s | %s |\n", name, k, float64(sc.at1)/n, float64(sc.at5)/n, sc.rr/n,
			ms(sc.lat[len(sc.lat)/2]), ms(sc.lat[len(sc.lat)*95/100]), older)
	}
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }

type span struct {
	path       string
	start, end int
}

// olderFirst: a replaced statement ranks above the newest (or the newest
// is missing).
func olderFirst(q question, hits []span) bool {
	for _, h := range hits {
		if h.covers(q.Path, q.Line) {
			return false
		}
		for _, o := range q.Older {
			if h.covers(o.Path, o.Line) {
				return true
			}
		}
	}
	return false
}

func (s span) covers(path string, line int) bool {
	return s.path == path && s.start <= line && line <= s.end
}

func evalMemory(ctx context.Context, s *memory.Store, qs []question, verbose bool) (results, error) {
	r := newResults()
	for _, q := range qs[:20] { // warm the caches and the query path
		if _, err := s.Search(ctx, q.Q, "", 10); err != nil {
			return r, err
		}
	}
	for _, q := range qs {
		t := time.Now()
		res, err := s.Search(ctx, q.Q, "", 10)
		took := time.Since(t)
		if err != nil {
			return r, err
		}
		hits := make([]span, len(res))
		for i, x := range res {
			hits[i] = span{x.Path, x.LineStart, x.LineEnd}
		}
		if rank := r.add(q, hits, took); verbose && (rank != 1 || q.Kind == "update" && olderFirst(q, hits)) {
			fmt.Fprintf(os.Stderr, "%s rank %d (older first: %v): %q -> %s:%d\n", q.Kind, rank, olderFirst(q, hits), q.Q, q.Path, q.Line)
			for i, x := range res[:min(3, len(res))] {
				fmt.Fprintf(os.Stderr, "   %d. %s:%d %q\n", i+1, x.Path, x.LineStart, x.Excerpt)
			}
		}
	}
	return r, nil
}

// evalRipgrep is what a grep-based memory does: search the question's
// words (case-insensitive, whole words, common English words left out) and
// rank lines by how many distinct words they contain, newest file first
// among equals.
func evalRipgrep(ctx context.Context, dir string, qs []question) (results, error) {
	r := newResults()
	rgPath, err := exec.LookPath("rg")
	if err != nil {
		return r, fmt.Errorf("ripgrep baseline: %w (install ripgrep or pass -rg=false)", err)
	}
	for _, q := range qs {
		words := contentWords(q.Q)
		args := []string{"-i", "-w", "-n", "-F", "--no-heading", "--with-filename"}
		for _, w := range words {
			args = append(args, "-e", w)
		}
		args = append(args, "--", filepath.Join(dir, "memory"))
		t := time.Now()
		out, err := exec.CommandContext(ctx, rgPath, args...).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				return r, fmt.Errorf("rg: %w", err)
			}
		}
		type line struct {
			span
			n int
		}
		var lines []line
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), ":", 3)
			if len(parts) < 3 {
				continue
			}
			rel, _ := filepath.Rel(dir, parts[0])
			n, _ := strconv.Atoi(parts[1])
			text := strings.ToLower(parts[2])
			k := 0
			for _, w := range words {
				if strings.Contains(text, strings.ToLower(w)) {
					k++
				}
			}
			lines = append(lines, line{span{filepath.ToSlash(rel), n, n}, k})
		}
		slices.SortStableFunc(lines, func(a, b line) int {
			if a.n != b.n {
				return b.n - a.n
			}
			return strings.Compare(b.path, a.path)
		})
		hits := make([]span, 0, 10)
		for _, l := range lines[:min(10, len(lines))] {
			hits = append(hits, l.span)
		}
		r.add(q, hits, time.Since(t))
	}
	return r, nil
}

// contentWords drops common English function words from a question, for
// the ripgrep baseline.
func contentWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(q, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '\'')
	}) {
		w = strings.Trim(w, "'")
		if w != "" && !strings.Contains(baselineStop, " "+strings.ToLower(w)+" ") {
			out = append(out, w)
		}
	}
	return out
}

const baselineStop = ` a an the is are was were be been do does did i my me we our you your he she his her it its they their
	what which who whom when where why how now to of in on at for with by from about and or not no s `

// supersede marks an older statement as memory_write's replaces does.
func supersede(ctx context.Context, s *memory.Store, o loc, q question) error {
	return s.Supersede(ctx, memory.Lines{Path: o.Path, LineStart: o.Line, LineEnd: o.Line}, q.Path)
}
