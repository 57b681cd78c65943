package security

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
)

// TestIdleConnectionsCannotStarveTheDesktop: 10,000 connections that send
// nothing, against the real binary run with a hard limit of 4,096 open
// files (a common system default; the run exhausted the
// descriptors this way), and the desktop's authenticated requests, each on
// a new connection, still answer.
//
// Timing on a shared 2-core machine is noisy, so the bound is generous and
// robust: every request must succeed within the client's 5 s timeout and
// their median must be under 100 ms (a starved service takes seconds, or
// never answers: the connection is never accepted).
func TestIdleConnectionsCannotStarveTheDesktop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /bin/sh ulimit and /proc")
	}
	const idle, limit = 10_000, 4096
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	os.WriteFile(cfgPath, []byte(`{}`), 0o600)
	svc, err := proc.Start("/bin/sh", []string{"-c", fmt.Sprintf(`ulimit -Sn 1024 && ulimit -Hn %d && exec "$0" "$@"`, limit), bin,
		"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--trust-config", "--config", cfgPath, "--log-level", "warn"},
		[]string{"JARVIS_TOKEN=" + token}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Kill()
	addr := strings.TrimPrefix(svc.URL, "http://")

	// The soft open-files limit was raised from 1024 to the hard one (the
	// Go runtime stops one below it on purpose: see service/listener/rlimit_unix.go).
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", svc.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`Max open files\s+(\d+)\s+(\d+)`).FindStringSubmatch(string(limits)); m == nil || m[2] != fmt.Sprint(limit) || (m[1] != fmt.Sprint(limit) && m[1] != fmt.Sprint(limit-1)) {
		t.Errorf("open-files limits of the service (soft, hard): %q", m)
	}

	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	d := net.Dialer{Timeout: 3 * time.Second}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < idle/8; i++ {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue // the backlog is full: the service stopped accepting
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d idle connections opened", len(conns), idle)

	// The desktop: authenticated requests, each on a new connection (the
	// worst case: one that must be accepted now).
	var took []time.Duration
	for i := 0; i < 20; i++ {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		c := api.NewClient(svc.URL, token, hc)
		start := time.Now()
		var agents api.AgentList
		if err := c.Do(context.Background(), "GET", "/v1/agents", nil, &agents); err != nil {
			t.Fatalf("authenticated request %d with %d idle connections open: %v", i, len(conns), err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("authenticated requests: median %s, max %s", took[len(took)/2], took[len(took)-1])
	if took[len(took)/2] > 100*time.Millisecond {
		t.Fatalf("median %s with %d idle connections open", took[len(took)/2], len(conns))
	}
}
