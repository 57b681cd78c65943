// Command load drives the real jarvis-service binary (built here) with
// 200 concurrent chat sessions running tool-using turns against the
// scripted upstream plus 50 external agents posting callbacks, all on
// loopback, and prints a Markdown table: turns and callbacks per second,
// turn time and callback POST → event latency (p50, p99), the service's
// CPU, and the lost/duplicated event count (the goal is zero). It exits 1
// when an event was lost or duplicated or a turn never ended.
//
//	go run -tags sqlite_fts5 ./bench/load [-sessions 200] [-externals 50] [-duration 60s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"jarvis/bench/load/loadgen"
	"jarvis/internal/proc"
)

func main() {
	sessions := flag.Int("sessions", 200, "chat sessions running tool-using turns")
	externals := flag.Int("externals", 50, "external agents posting callbacks")
	duration := flag.Duration("duration", 60e9, "load window")
	bin := flag.String("bin", "", "a built jarvis-service binary (default: build one)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "jarvis-load-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		if *bin, err = proc.BuildService(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	rep, err := loadgen.Run(context.Background(), loadgen.Options{Binary: *bin, Sessions: *sessions, Externals: *externals, Duration: *duration, Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("## Load: %d chat sessions + %d external agents, %s, %d CPUs (%s/%s)\n\n", *sessions, *externals, *duration, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	rep.Markdown(os.Stdout)
	for _, f := range rep.Failures {
		fmt.Fprintln(os.Stderr, "problem:", f)
	}
	if !rep.OK() {
		os.Exit(1)
	}
}
