package cliagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestCancelEndsEveryProcessTheCLIStarted: cancelling a turn leaves nothing
// the CLI started running, even a tool it started in a session of its own
// (pi runs bash detached, which is setsid) that ignores SIGINT and SIGTERM.
// The processes are counted by the FAKE_DIR each of them inherits.
func TestCancelEndsEveryProcessTheCLIStarted(t *testing.T) {
	t.Parallel()
	first := map[Kind]string{
		KindClaude: `{"type":"system","subtype":"init","session_id":"s"}`,
		KindCodex:  `{"type":"thread.started","thread_id":"th"}`,
		KindPi:     `{"type":"session","version":3,"id":"p","cwd":"/w"}`,
	}
	for kind, line := range first {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			f := newFake(t, `@sh trap 'exit 130' INT TERM
`+line+`
@sh setsid sh -c 'trap "" INT TERM HUP; sleep 60; :' >/dev/null 2>&1 &
@sh sh -c 'trap "" INT TERM; sleep 60; :' >/dev/null 2>&1 &
@sh sleep 60 >/dev/null 2>&1 &
@sh touch "$FAKE_DIR/started"; wait`)
			r := f.runner(kind, func(o *Options) { o.GracePeriod = 300 * time.Millisecond })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					// The CLI, two tool shells and three sleeps: all started.
					if _, err := os.Stat(filepath.Join(f.dir, "started")); err == nil && countProcs(f.dir) == 6 {
						cancel()
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			if _, err := r.Run(ctx, Request{Prompt: "hi"}, nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			deadline := time.Now().Add(3 * time.Second)
			n := countProcs(f.dir)
			for n > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				n = countProcs(f.dir)
			}
			if n != 0 {
				t.Errorf("%d processes the CLI started are still running after the cancel", n)
				killProcs(f.dir)
			}
		})
	}
}

// procsOf lists the live (not zombie) processes whose environment holds
// FAKE_DIR=dir.
func procsOf(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	want := []byte("FAKE_DIR=" + dir + "\x00")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func countProcs(dir string) int { return len(procsOf(dir)) }

func killProcs(dir string) {
	for _, pid := range procsOf(dir) {
		_ = syscallKill(pid)
	}
}
