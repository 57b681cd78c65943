// Command sandbox measures what the sandbox adds to starting a program:
// run_command of `true` through the real executor, start to exit,
// unconfined (the baseline), under Landlock and seccomp alone (the
// confinement helper, no bubblewrap) and under the whole sandbox
// (bubblewrap, then the helper), interleaved in the same run so all three
// see the same machine and load. This binary is its own confinement
// helper (tools.ConfineSubcommand), as the jarvis binary is.
//
//	go run ./bench/sandbox [-n 200]
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
	"runtime"
	"time"

	"jarvis/internal/measure"
	"jarvis/tools"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == tools.ConfineSubcommand {
		err := tools.ConfineMain(os.Args[2:])
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(126)
	}
	n := flag.Int("n", 200, "starts of each kind")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type kind struct {
	name string
	x    *tools.Executor
	took []time.Duration
}

func run(n int) error {
	ws, err := os.MkdirTemp("", "jarvis-bench-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	helper := []string{self, tools.ConfineSubcommand}
	var kinds []*kind
	for _, k := range []struct {
		name string
		o    tools.Options
	}{
		{"unconfined (baseline)", tools.Options{Workspace: ws, NoBubblewrap: true}},
		{"Landlock and seccomp (no bubblewrap)", tools.Options{Workspace: ws, NoBubblewrap: true, ConfineHelper: helper}},
		{"the whole sandbox (bubblewrap, Landlock, seccomp)", tools.Options{Workspace: ws, ConfineHelper: helper}},
	} {
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
	fmt.Printf("%d starts of `true` through run_command, each kind, interleaved; %s/%s, %d CPUs.\n\n", n, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
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
	fmt.Printf("\nCommand: `go run ./bench/sandbox -n %d`\n", n)
	return nil
}
