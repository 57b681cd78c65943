package crash

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

// TestNoDatabaseLockedUnderContention: 50 writers (chat turns, memory writes,
// session edits) and 50 SSE readers against one service: no request ever
// fails, and "database is locked" never reaches a client. 60 s in `make
// test`; -short runs 10 s.
func TestNoDatabaseLockedUnderContention(t *testing.T) {
	dur := 60 * time.Second
	if testing.Short() {
		dur = 10 * time.Second
	}
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m","contextWindow":32768}}}`, up.URL+"/v1")), 0o600)
	d := start(t, bin, filepath.Join(dir, "data"), cfg)
	defer func() { d.Kill() }()
	c := api.NewClient(d.URL, token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()

	var ops, events atomic.Int64
	var mu sync.Mutex
	var failures []string
	fail := func(what string, err error) {
		if ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context")) {
			return
		}
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, what+": "+err.Error())
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < 50; w++ {
		s, err := c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("c%d", w)})
		if err != nil {
			t.Fatal(err)
		}
		sid := s.GeneralSessionID
		wg.Add(2)
		go func() { // reader
			defer wg.Done()
			err := c.Stream(ctx, sid, "", func(api.StreamEvent) error { events.Add(1); return nil })
			if err != nil {
				fail("stream", err)
			}
		}()
		go func(w int) { // writer
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var err error
				switch i % 3 {
				case 0:
					_, err = c.Chat(ctx, sid, fmt.Sprintf("m%d [[deltas 20]]", i))
				case 1:
					err = c.Do(ctx, "POST", "/v1/memory/write", api.MemoryWriteRequest{Target: "daily", Content: fmt.Sprintf("w%d-%d", w, i)}, nil)
				case 2:
					name := fmt.Sprintf("n%d", i)
					err = c.Do(ctx, "PATCH", "/v1/sessions/"+sid, api.UpdateSessionRequest{Name: &name}, nil)
				}
				if err != nil {
					fail("write", err)
					continue
				}
				ops.Add(1)
			}
		}(w)
	}
	wg.Wait()
	for _, f := range failures {
		if strings.Contains(f, "locked") {
			t.Errorf("database is locked reached a client: %s", f)
		} else {
			t.Errorf("request failed: %s", f)
		}
	}
	if ops.Load() == 0 || events.Load() == 0 {
		t.Fatalf("no load ran (%d ops, %d events)", ops.Load(), events.Load())
	}
	t.Logf("%s: %d writes acknowledged, %d events streamed to 50 readers", dur, ops.Load(), events.Load())
}
