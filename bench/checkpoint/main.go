// Command checkpoint measures what a checkpoint adds to a file change: a
// 1 MiB write_file over a 1 MiB file through the real executor, with and
// without the checkpoint of the file's previous state (app/checkpoint:
// content stored and fsynced, the change committed before and after),
// interleaved in the same run so both see the same disk and load. Every
// write has new content, so no checkpoint is saved by deduplication. It
// also prints the checkpoint's own time: each Guard minus the write inside
// it, which does not depend on what the plain writes cost (a write
// that frees the replaced file's blocks pays for that; a checkpointed one
// that keeps the old inode leaves it to pruning).
//
//	go run -tags sqlite_fts5 ./bench/checkpoint [-n 200] [-size 1048576] [-dir DIR]
//
// It prints a Markdown section: p50/p90/p99 of both, the added time, the goal.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"jarvis/internal/measure"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"jarvis/app/checkpoint"
	"jarvis/tools"
)

func main() {
	n := flag.Int("n", 200, "writes of each kind")
	size := flag.Int("size", 1<<20, "bytes per write")
	dir := flag.String("dir", "", "folder for the workspace and the store (default: a new temporary folder)")
	flag.Parse()
	if err := run(*n, *size, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n, size int, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "jarvis-bench-checkpoint-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	x, err := tools.NewExecutor(tools.Options{Workspace: ws, MaxWriteBytes: size})
	if err != nil {
		return err
	}
	defer x.Close()
	st, err := checkpoint.Open(filepath.Join(dir, "checkpoints"), ws, checkpoint.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	content := func() json.RawMessage {
		b := make([]byte, size/2)
		rand.Read(b)
		a, _ := json.Marshal(map[string]string{"path": "f.txt", "content": hex.EncodeToString(b)})
		return a
	}
	// write returns the call's whole time and, guarded, the checkpoint's
	// own part of it: Guard's time minus the write inside it.
	write := func(args json.RawMessage, guarded bool) (time.Duration, time.Duration, error) {
		start := time.Now()
		if !guarded {
			_, err := x.Execute(ctx, "write_file", args)
			return time.Since(start), 0, err
		}
		p, err := x.Prepare("write_file", args)
		if err != nil {
			return 0, 0, err
		}
		var inner time.Duration
		g0 := time.Now()
		_, _, err = st.Guard(ctx, checkpoint.Meta{TurnID: "bench", Tool: "write_file", Replaces: p.Replaces()}, p.Changes(), func() (string, error) {
			t0 := time.Now()
			defer func() { inner = time.Since(t0) }()
			return p.Run(ctx)
		})
		end := time.Now()
		return end.Sub(start), end.Sub(g0) - inner, err
	}
	if _, _, err := write(content(), false); err != nil { // the file exists from here on
		return err
	}
	var plain, guarded, own []time.Duration
	for i := 0; i < 2*n; i++ {
		args := content() // made outside the timing
		g := i%2 == 1
		d, o, err := write(args, g)
		if err != nil {
			return err
		}
		if g {
			guarded = append(guarded, d)
			own = append(own, o)
		} else {
			plain = append(plain, d)
		}
	}
	u, _ := st.Usage(ctx)
	p := func(ds []time.Duration, q float64) time.Duration { return measure.Percentile(ds, q*100) }
	ms := measure.Ms
	added := p(guarded, 0.5) - p(plain, 0.5)
	verdict := "yes"
	if added >= 5*time.Millisecond {
		verdict = "no"
	}
	fmt.Printf("## Checkpoint before a file change (bench/checkpoint)\n\n")
	fmt.Printf("%d writes of %d bytes over a file of the same size, each kind, interleaved; new content every time (no deduplication); %s/%s, %d CPUs; store: %s.\n\n",
		n, size, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), dir)
	fmt.Println("| figure | p50 | p90 | p99 |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| write_file alone (baseline) | %s | %s | %s |\n", ms(p(plain, .5)), ms(p(plain, .9)), ms(p(plain, .99)))
	fmt.Printf("| write_file with its checkpoint | %s | %s | %s |\n", ms(p(guarded, .5)), ms(p(guarded, .9)), ms(p(guarded, .99)))
	fmt.Printf("| the checkpoint's own time (Guard minus the write inside it) | %s | %s | %s |\n", ms(p(own, .5)), ms(p(own, .9)), ms(p(own, .99)))
	fmt.Printf("\n| figure | value | goal | verdict |\n|---|---|---|---|\n")
	fmt.Printf("| added by the checkpoint, p50 | %s | < 5 ms | %s |\n", ms(added), verdict)
	fmt.Printf("| store after the run | %d checkpoints, %d bytes | | |\n", u.Changes, u.Bytes)
	fmt.Printf("\nCommand: `go run -tags sqlite_fts5 ./bench/checkpoint -n %d -size %d`\n", n, size)
	return nil
}
