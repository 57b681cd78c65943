// Command locomo measures memory recall on LoCoMo (Maharana et al., "Evaluating
// Very Long-Term Conversational Memory of LLM Agents", ACL 2024): ten long
// conversations between two people over up to 35 dated sessions, with
// questions whose evidence turns are annotated. The data is not part of
// this repository (it is published in the snap-research/locomo repository
// on GitHub as data/locomo10.zip, under its own terms, and not
// redistributed here); give its path on the command line:
//
//	go run -tags sqlite_fts5 ./bench/locomo -data /path/to/locomo10.zip
//
// Each conversation is written as daily notes (notes.go: one line per
// dialog turn, one file per session date) into a workspace of its own, the
// real jarvis-service is started on it, and every question is sent to
// GET /v1/memory/search?limit=5 as asked. A question counts as found
// ("any") when one of its evidence turns lies in a returned line range, and
// fully found ("all") when every one does. The same lines searched by plain
// BM25 (bm25.go) are the baseline. Adversarial questions (category 5) have
// no evidence and are not asked; nothing is tuned to this data's answers.
//
// -direct calls memory.Store.Search in this process instead of the service
// (the same ranking, without HTTP), for quick experiments.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/internal/measure"
	"jarvis/internal/proc"
	"jarvis/memory"
)

func main() {
	data := flag.String("data", "", "LoCoMo's locomo10.zip (or locomo10.json, or a folder of its conversation files)")
	limit := flag.Int("k", 5, "results per question (the cut-off of recall)")
	direct := flag.Bool("direct", false, "call memory.Store.Search in this process instead of the service's HTTP route")
	verbose := flag.Bool("v", false, "print each question not fully found")
	only := flag.String("conv", "", "only this conversation (its name)")
	convs := flag.String("convs", "", "only these conversations by position in name order, from 1: \"1-5\", \"6-10\", \"2,4\" (tune on one part, report on the other)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file (with -direct: of the searches)")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "usage: locomo -data /path/to/locomo10.zip  (LoCoMo: github.com/snap-research/locomo, data/locomo10.zip)")
		os.Exit(2)
	}
	cfg := config{data: *data, k: *limit, direct: *direct, verbose: *verbose, only: *only, convs: *convs}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	res, err := run(context.Background(), cfg)
	if err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
	fmt.Print(res.table())
}

type config struct {
	data    string
	k       int
	direct  bool
	verbose bool
	only    string
	convs   string // positions, as -convs takes them
}

// positions reads -convs: conversation positions from 1 to n, as ranges
// ("1-5") and single numbers joined by commas; nil (every conversation)
// when s is empty.
func positions(s string, n int) (map[int]bool, error) {
	if s == "" {
		return nil, nil
	}
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 1 || b < a || b > n {
			return nil, fmt.Errorf("-convs %q: %q is not a position or range of positions between 1 and %d", s, part, n)
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out, nil
}

// span is a returned line range and the size of its text.
type span struct {
	Path       string
	Start, End int
	Bytes      int
}

// tally counts one category's questions found.
type tally struct{ n, any, all, bmAny, bmAll int }

// results of a run.
type results struct {
	cats      map[int]*tally
	latencies []time.Duration
	bmLat     []time.Duration // plain BM25's, same run
	via       string
	convs     int
	bytes     int // of the returned passages' text, every question
}

// searcher asks one question of one conversation's memory.
type searcher func(ctx context.Context, q string, k int) ([]span, error)

func run(ctx context.Context, cfg config) (*results, error) {
	convs, err := load(cfg.data)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "jarvis-locomo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	pick, err := positions(cfg.convs, len(convs))
	if err != nil {
		return nil, err
	}
	res := &results{cats: map[int]*tally{}, via: "GET /v1/memory/search (jarvis-service)"}
	var bin string
	if cfg.direct {
		res.via = "memory.Store.Search (in process)"
	} else {
		if bin, err = proc.BuildService(work); err != nil {
			return nil, err
		}
	}
	for i, c := range convs {
		if cfg.only != "" && c.Name != cfg.only || pick != nil && !pick[i+1] {
			continue
		}
		dir := filepath.Join(work, fmt.Sprintf("conv-%02d", i))
		lines, err := writeNotes(dir, c)
		if err != nil {
			return nil, err
		}
		if err := runConversation(ctx, cfg, bin, dir, c, lines, res); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		res.convs++
	}
	return res, nil
}

// runConversation asks a conversation's questions of Jarvis and of the
// baseline.
func runConversation(ctx context.Context, cfg config, bin, dir string, c conversation, lines map[string]loc, res *results) error {
	var search searcher
	if cfg.direct {
		s, err := memory.Open(ctx, memory.Options{Root: dir, DisableWatcher: true})
		if err != nil {
			return err
		}
		defer s.Close()
		search = func(ctx context.Context, q string, k int) ([]span, error) {
			rs, err := s.Search(ctx, q, "", k)
			if err != nil {
				return nil, err
			}
			out := make([]span, len(rs))
			for i, r := range rs {
				out[i] = span{r.Path, r.LineStart, r.LineEnd, len(r.Excerpt)}
			}
			return out, nil
		}
	} else {
		svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--config", filepath.Join(dir, "none.json"), "--log-level", "warn"},
			[]string{"JARVIS_TOKEN=bench-token"}, false)
		if err != nil {
			return err
		}
		defer svc.Stop()
		cl := api.NewClient(svc.URL, "bench-token", nil)
		search = func(ctx context.Context, q string, k int) ([]span, error) {
			var r api.MemorySearchResponse
			if err := cl.Do(ctx, "GET", fmt.Sprintf("/v1/memory/search?limit=%d&q=%s", k, url.QueryEscape(q)), nil, &r); err != nil {
				return nil, err
			}
			out := make([]span, len(r.Results))
			for i, x := range r.Results {
				out[i] = span{x.Path, x.LineStart, x.LineEnd, len(x.Excerpt)}
			}
			return out, nil
		}
		// Warm up the connection and the index's pages.
		for _, q := range c.QA[:min(10, len(c.QA))] {
			if _, err := search(ctx, q.Question, cfg.k); err != nil {
				return err
			}
		}
	}
	bm, err := newPlainBM25(ctx, lines)
	if err != nil {
		return err
	}
	defer bm.close()
	for _, q := range c.QA {
		name, ok := categories[q.Category]
		if !ok {
			continue
		}
		ev := evidence(q, lines)
		if len(ev) == 0 {
			continue
		}
		t0 := time.Now()
		got, err := search(ctx, q.Question, cfg.k)
		if err != nil {
			return err
		}
		res.latencies = append(res.latencies, time.Since(t0))
		for _, g := range got {
			res.bytes += g.Bytes
		}
		t0 = time.Now()
		base, err := bm.search(ctx, q.Question, cfg.k)
		if err != nil {
			return err
		}
		res.bmLat = append(res.bmLat, time.Since(t0))
		tl := res.cats[q.Category]
		if tl == nil {
			tl = &tally{}
			res.cats[q.Category] = tl
		}
		tl.n++
		a, _ := found(ev, lines, got)
		if a > 0 {
			tl.any++
		}
		if a == len(ev) {
			tl.all++
		}
		if b, _ := found(ev, lines, base); b > 0 {
			tl.bmAny++
			if b == len(ev) {
				tl.bmAll++
			}
		}
		if cfg.verbose && a < len(ev) {
			fmt.Printf("MISS %s [%s] %q: %d of %d evidence turns\n", c.Name, name, q.Question, a, len(ev))
			for _, e := range ev {
				fmt.Printf("    want %s %s:%d %s\n", e, lines[e].Path, lines[e].Line, lines[e].Text)
			}
			for _, g := range got {
				fmt.Printf("    got  %s:%d-%d\n", g.Path, g.Start, g.End)
			}
		}
	}
	return nil
}

// found counts the evidence turns lying in a returned range; the second
// value is how many results were returned.
func found(ev []string, lines map[string]loc, got []span) (int, int) {
	n := 0
	for _, e := range ev {
		l := lines[e]
		if slices.ContainsFunc(got, func(s span) bool { return s.Path == l.Path && s.Start <= l.Line && l.Line <= s.End }) {
			n++
		}
	}
	return n, len(got)
}

// table prints the figures as a Markdown table.
func (r *results) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "LoCoMo: %d conversations, questions through %s, evidence turn in the top results\n\n", r.convs, r.via)
	b.WriteString("| category | n | Jarvis, any evidence turn | Jarvis, all | plain BM25, any | plain BM25, all |\n|---|---|---|---|---|---|\n")
	var sum tally
	for _, c := range categoryOrder {
		t := r.cats[c]
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", categories[c], t.n, frac(t.any, t.n), frac(t.all, t.n), frac(t.bmAny, t.n), frac(t.bmAll, t.n))
		sum.n += t.n
		sum.any += t.any
		sum.all += t.all
		sum.bmAny += t.bmAny
		sum.bmAll += t.bmAll
	}
	fmt.Fprintf(&b, "| all | %d | %s | %s | %s | %s |\n", sum.n, frac(sum.any, sum.n), frac(sum.all, sum.n), frac(sum.bmAny, sum.n), frac(sum.bmAll, sum.n))
	if sum.n > 0 {
		fmt.Fprintf(&b, "\nreturned text: %.1f KB per question on average\n", float64(r.bytes)/1000/float64(sum.n))
	}
	if len(r.latencies) > 0 {
		fmt.Fprintf(&b, "\nsearch latency: p50 %s, p95 %s (%d questions); plain BM25 in this process, same run: p50 %s, p95 %s\n",
			measure.Ms(measure.Median(r.latencies)), measure.Ms(measure.Percentile(r.latencies, 95)), len(r.latencies),
			measure.Ms(measure.Median(r.bmLat)), measure.Ms(measure.Percentile(r.bmLat, 95)))
	}
	return b.String()
}

func frac(a, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(n))
}
