// Package load is the short version of bench/load: the real jarvis-service
// binary under 200 chat sessions running tool-using turns plus 50 external
// agents posting callbacks, all on loopback. Nothing may be lost or
// duplicated: every SSE client's ids are consecutive, every turn it started
// ended, every accepted callback's event arrived once.
//
// Run: go test -race -tags sqlite_fts5 -short ./tests/load/ (5 s of load;
// 15 s without -short). The full 60 s run: go run -tags sqlite_fts5 ./bench/load
package load

import (
	"context"
	"strings"
	"testing"
	"time"

	"jarvis/bench/load/loadgen"
	"jarvis/internal/proc"
)

func TestNothingLostUnderLoad(t *testing.T) {
	d := 15 * time.Second
	if testing.Short() {
		d = 5 * time.Second
	}
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := loadgen.Run(context.Background(), loadgen.Options{Binary: bin, Sessions: 200, Externals: 50, Duration: d, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Markdown(&b)
	t.Logf("\n%s", b.String())
	for _, f := range rep.Failures {
		t.Errorf("problem: %s", f)
	}
	if rep.Lost != 0 || rep.Duplicated != 0 || rep.Unended != 0 || rep.Missing != 0 {
		t.Fatalf("lost %d, duplicated %d, unended turns %d, callbacks without their event %d", rep.Lost, rep.Duplicated, rep.Unended, rep.Missing)
	}
	// A run that did nothing proves nothing.
	if rep.Turns < 200 || rep.Callbacks < 50 || rep.CPUSeconds <= 0 {
		t.Fatalf("too little load to prove anything: %d turns, %d callbacks, %.2f s CPU", rep.Turns, rep.Callbacks, rep.CPUSeconds)
	}
}
