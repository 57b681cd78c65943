// Command sandbox measures what the sandbox adds to starting a program:
// run_command of `true` through the real executor, start to exit,
// unconfined (the baseline), under Landlock and seccomp alone (the small
// helper jarvis-confine, no bubblewrap) and under the whole sandbox
// (bubblewrap, then the helper), interleaved in the same run so all see
// the same machine and load. It builds cmd/jarvis-confine first (go
// build). With -jarvis PATH (a built jarvis binary) it also measures the
// whole sandbox through that binary's own `__confine` re-exec, the helper
// used when jarvis-confine is not installed beside it.
//
//	go run ./bench/sandbox [-n 200] [-jarvis build/bin/jarvis]
//
// It prints a Markdown section: p50/p90/p99 of each, the time added at
// p50, the goal (under 15 ms added).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"jarvis/internal/measure"
	"jarvis/tools"
)

func main() {
	n := flag.Int("n", 200, "starts of each kind")
	jarvis := flag.String("jarvis", "", "a built jarvis binary: also measure its `__confine` re-exec")
	flag.Parse()
	if err := run(*n, *jarvis); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type kind struct {
	name string
	x    *tools.Executor
	took []time.Duration
}

func run(n int, jarvis string) error {
	ws, err := os.MkdirTemp("", "jarvis-bench-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	bin := filepath.Join(ws, ".bin")
	small := filepath.Join(bin, tools.HelperName)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-w -s", "-o", small, "./cmd/jarvis-confine")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build builds it
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/jarvis-confine (run from the repository): %v %s", err, out)
	}
	helper := []string{small}
	type conf struct {
		name string
		o    tools.Options
	}
	confs := []conf{
		{"unconfined (baseline)", tools.Options{Workspace: ws, NoBubblewrap: true}},
		{"Landlock and seccomp (jarvis-confine, no bubblewrap)", tools.Options{Workspace: ws, NoBubblewrap: true, ConfineHelper: helper}},
		{"the whole sandbox (bubblewrap, then jarvis-confine)", tools.Options{Workspace: ws, ConfineHelper: helper}},
	}
	if jarvis != "" {
		abs, err := filepath.Abs(jarvis)
		if err != nil {
			return err
		}
		// A copy alone in its folder, so no jarvis-confine sits beside it.
		lone := filepath.Join(ws, ".jarvis", "jarvis")
		if err := os.MkdirAll(filepath.Dir(lone), 0o755); err != nil {
			return err
		}
		if out, err := exec.Command("cp", abs, lone).CombinedOutput(); err != nil {
			return fmt.Errorf("cp %s: %v %s", abs, err, out)
		}
		confs = append(confs, conf{"the whole sandbox through `jarvis __confine` (the re-exec)", tools.Options{Workspace: ws, ConfineHelper: []string{lone, tools.ConfineSubcommand}}})
	}
	var kinds []*kind
	for _, k := range confs {
		x, err := tools.NewExecutor(k.o)
		if err != nil {
			return err
		}
		defer x.Close()
		kinds = append(kinds, &kind{name: k.name, x: x})
	}
	args := json.RawMessage(`{"program":"true"}`)
	for i := 0; i < n+5; i++ {
		for _, k := range kinds {
			start := time.Now()
			out, err := k.x.Execute(context.Background(), "run_command", args)
			d := time.Since(start)
			var r tools.CommandResult
			if err == nil {
				err = json.Unmarshal([]byte(out), &r)
			}
			if err != nil || r.ExitCode != 0 {
				return fmt.Errorf("%s: %v %s", k.name, err, out)
			}
			if i >= 5 { // the first starts warm the caches
				k.took = append(k.took, d)
			}
		}
	}
	p := measure.Percentile
	ms := measure.Ms
	fmt.Printf("## Sandbox start-to-exit (bench/sandbox)\n\n")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d starts of `true` through run_command, each kind, interleaved; %s/%s, %d CPUs; load average at the end: %s.\n\n", n, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Println("| figure | how it runs | p50 | p90 | p99 |")
	fmt.Println("|---|---|---|---|---|")
	for _, k := range kinds {
		fmt.Printf("| %s | %s | %s | %s | %s |\n", k.name, k.x.Sandbox(nil, false).Describe(), ms(p(k.took, 50)), ms(p(k.took, 90)), ms(p(k.took, 99)))
	}
	base := p(kinds[0].took, 50)
	fmt.Printf("\n| figure | value | goal | verdict |\n|---|---|---|---|\n")
	for _, k := range kinds[1:] {
		added := p(k.took, 50) - base
		fmt.Printf("| added at p50: %s | %s | < 15 ms | %s |\n", k.name, ms(added), measure.Verdict(added < 15*time.Millisecond))
	}
	cmd := fmt.Sprintf("go run ./bench/sandbox -n %d", n)
	if jarvis != "" {
		cmd += " -jarvis " + jarvis
	}
	fmt.Printf("\nCommand: `%s`\n", cmd)
	return nil
}
