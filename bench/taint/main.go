// Command taint measures the taint-aware gate on both sides (docs/SECURITY.md,
// "Where the words came from"): the injection suite (every untrusted source ×
// every outbound tool, under broad "always allow" rules: how many secrets
// left, how many were stopped by a prompt that names the source), the
// utility suite (prompts added on benign tasks), and what the provenance
// bookkeeping adds to one tool call, against the same call without it in the
// same run.
//
//	go run -tags sqlite_fts5 ./bench/taint [-n 20000] [-suites=true]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/internal/measure"
	"jarvis/internal/taintlab"
	"jarvis/service/provenance"
	"jarvis/tools"
)

func main() {
	n := flag.Int("n", 20000, "calls timed for the bookkeeping's overhead")
	suites := flag.Bool("suites", true, "run the injection and utility suites")
	flag.Parse()
	if *suites {
		if err := runSuites(); err != nil {
			fmt.Fprintln(os.Stderr, "taint:", err)
			os.Exit(1)
		}
	}
	if err := overhead(*n); err != nil {
		fmt.Fprintln(os.Stderr, "taint:", err)
		os.Exit(1)
	}
}

func runSuites() error {
	inj := taintlab.Injection()
	leaked, named := 0, 0
	for _, s := range inj {
		r, err := s.Run()
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if r.Leaked {
			leaked++
			fmt.Println("LEAKED:", s.Name)
		}
		if r.Named > 0 && !r.Leaked {
			named++
		}
	}
	clean, cleanAsked, untrusted, extra := 0, 0, 0, 0
	for _, t := range taintlab.Utility() {
		r, err := t.Run()
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		if t.ReadsUntrusted {
			untrusted++
			extra += r.Asked
		} else {
			clean++
			cleanAsked += r.Asked
		}
	}
	fmt.Printf("Injection suite: %d scenarios (every untrusted source × every outbound tool), broad always-allow rules, headless gate\n\n", len(inj))
	fmt.Println("| figure | value | goal | met |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| secrets that left without a prompt naming the source | %d | 0 | %s |\n", leaked, measure.Verdict(leaked == 0))
	fmt.Printf("| scenarios stopped by a prompt that names the source | %d of %d | all | %s |\n", named, len(inj), measure.Verdict(named == len(inj)))
	fmt.Printf("\nUtility suite: %d benign tasks\n\n", clean+untrusted)
	fmt.Println("| figure | value | goal | met |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| extra prompts on the %d tasks that read nothing untrusted | %d | 0 | %s |\n", clean, cleanAsked, measure.Verdict(cleanAsked == 0))
	fmt.Printf("| extra prompts on the %d tasks that read untrusted content | %d | reported | |\n\n", untrusted, extra)
	return nil
}

// overhead times, call by call and in turns, what the bookkeeping adds:
// the gate's judgement of a call with untrusted sources against the same call
// with none, the service's record of a result's source and of the context's
// sources on the next request, and the desktop's read of a file's download
// mark.
func overhead(n int) error {
	dir, err := os.MkdirTemp("", "taintbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	x, err := tools.NewExecutor(tools.Options{Workspace: dir})
	if err != nil {
		return err
	}
	defer x.Close()
	lg, err := audit.Open(filepath.Join(dir, "audit.db"), audit.Options{})
	if err != nil {
		return err
	}
	defer lg.Close()
	g, err := gate.New(gate.Options{Policy: gate.Policy{Rules: []gate.Rule{{Tool: "write_file", Action: gate.Allow}}}, Assessor: x, Audit: lg})
	if err != nil {
		return err
	}
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte("<p>hi</p>"), 0o600); err != nil {
		return err
	}
	if err := unix.Setxattr(page, "user.xdg.origin.url", []byte("https://evil.example/"), 0); err != nil {
		return err
	}
	req := gate.Request{ID: "tc_1", SessionID: "s", Name: "write_file", Arguments: json.RawMessage(`{"path":"notes.md","content":"a note"}`)}
	src := api.Source{Kind: "tool", Name: "read_file", Detail: "page.html downloaded from https://evil.example/"}
	tainted := req
	tainted.Untrusted = []api.Source{src, {Kind: "agent", Name: "helper"}}
	result := api.ToolResult{OK: true, Result: "<p>hi</p>", Trust: api.Untrusted, Origin: &src}

	var plain, judged, record, mark []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		g.Classify(req)
		t1 := time.Now()
		g.Classify(tainted)
		t2 := time.Now()
		var set provenance.Set
		set.Add(provenance.Of("read_file", result)...)
		meta := provenance.Meta("", provenance.Of("read_file", result)...)
		set.Add(provenance.FromMeta(meta)...)
		if len(set.List()) != 1 {
			return fmt.Errorf("the set holds %v", set.List())
		}
		t3 := time.Now()
		if tools.DownloadOrigin(page) == "" {
			return fmt.Errorf("no download mark on %s", page)
		}
		t4 := time.Now()
		plain, judged, record, mark = append(plain, t1.Sub(t0)), append(judged, t2.Sub(t1)), append(record, t3.Sub(t2)), append(mark, t4.Sub(t3))
	}
	p := func(d []time.Duration) time.Duration { return measure.Median(d) }
	added := p(judged) - p(plain) + p(record) + p(mark)
	fmt.Printf("Bookkeeping on the tool path: %d calls, each piece timed in turns in one run\n\n", n)
	fmt.Println("| figure | p50 |")
	fmt.Println("|---|---|")
	fmt.Printf("| gate: a call with no untrusted sources (baseline) | %s |\n", p(plain))
	fmt.Printf("| gate: the same call with two untrusted sources | %s |\n", p(judged))
	fmt.Printf("| service: a result's source recorded, stored in meta, read back, listed | %s |\n", p(record))
	fmt.Printf("| desktop: a file's download mark read | %s |\n", p(mark))
	fmt.Printf("| **added to one call** | **%s** (goal < 0.1 ms: %s) |\n", added, measure.Verdict(added < 100*time.Microsecond))
	return nil
}
