package conformance

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"jarvis/api"
)

// esLine is one line the EventSource script prints.
type esLine struct {
	Open      int    `json:"open"`
	Event     string `json:"event"`
	ID        string `json:"id"`
	Retry     int    `json:"retry"`
	Error     bool   `json:"error"`
	Reconnect *struct {
		DelayMs     int     `json:"delayMs"`
		LastEventID *string `json:"lastEventId"`
	} `json:"reconnect"`
}

// TestEventSourceReconnectsAfterRetry: the npm eventsource package (the
// WHATWG EventSource) follows a session stream; the connection is dropped;
// it reconnects after the stream's retry: 1000 (its own default is 3 s)
// with Last-Event-ID, and misses no event and sees none twice.
func TestEventSourceReconnectsAfterRetry(t *testing.T) {
	dir := nodePeers(t)
	srv, c := startService(t, "", nil)
	ctx := ctxFor(t)
	s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j-es"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "sse.cjs"), srv.URL+"/v1/stream?general_session_id="+url.QueryEscape(s.GeneralSessionID), token)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := make(chan esLine, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l esLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("eventsource script printed %q", sc.Text())
				continue
			}
			lines <- l
		}
	}()
	var (
		retries []int
		ids     []int64
		finals  int
		rec     *esLine
	)
	// until reads the script's lines until ok(line) holds.
	until := func(what string, ok func(esLine) bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, open := <-lines:
				if !open {
					t.Fatalf("the eventsource script ended while waiting for %s", what)
				}
				if l.Retry != 0 {
					retries = append(retries, l.Retry)
				}
				if l.Event != "" {
					n, err := strconv.ParseInt(l.ID, 10, 64)
					if err != nil {
						t.Fatalf("event %s without a numeric id %q", l.Event, l.ID)
					}
					ids = append(ids, n)
					if l.Event == api.EventFinal {
						finals++
					}
				}
				if l.Reconnect != nil {
					rec = &l
				}
				if ok(l) {
					return
				}
			case <-timeout:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	until("the first open", func(l esLine) bool { return l.Open == 1 })
	if _, err := c.Chat(ctx, s.GeneralSessionID, "before the drop"); err != nil {
		t.Fatal(err)
	}
	until("the first turn's final", func(esLine) bool { return finals == 1 })
	lastBefore := ids[len(ids)-1]
	srv.CloseClientConnections() // the connection is lost, the service stays up
	until("the reconnection", func(l esLine) bool { return l.Open == 2 })
	if _, err := c.Chat(ctx, s.GeneralSessionID, "after the drop"); err != nil {
		t.Fatal(err)
	}
	until("the second turn's final", func(esLine) bool { return finals == 2 })

	if len(retries) < 2 {
		t.Fatalf("retry fields seen: %v, want one per connection", retries)
	}
	for _, r := range retries {
		if r != 1000 {
			t.Fatalf("retry fields seen: %v, want 1000", retries)
		}
	}
	if rec == nil || rec.Reconnect.LastEventID == nil || *rec.Reconnect.LastEventID != strconv.FormatInt(lastBefore, 10) {
		t.Fatalf("the reconnection did not resume from event %d: %+v", lastBefore, rec)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("event ids %v: a gap or a repeat across the reconnection", ids)
		}
	}
	// A figure, not an assertion: the delay depends on the machine's load.
	t.Logf("EventSource reconnected %d ms after the connection was lost (retry: %d; its default is 3000)", rec.Reconnect.DelayMs, retries[0])
}
