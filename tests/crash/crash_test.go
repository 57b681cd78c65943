package crash

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

const token = "crash-token"

func start(t *testing.T, bin, dataDir, cfg string) *proc.Proc {
	t.Helper()
	p, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--trust-config", "--config", cfg, "--log-level", "error"},
		[]string{"JARVIS_TOKEN=" + token}, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ledger is what clients were told succeeded.
type ledger struct {
	mu       sync.Mutex
	sessions map[string]bool
	messages map[string][]string // session → user texts whose user.message event arrived
	memory   []string            // markers whose memory write answered 200
	seen     map[string][]api.StreamEvent
	// unsearched are the accepted messages not yet looked for by search
	// (the index is filled after the commit: service/store/searchindex.go).
	unsearched [][2]string // session, text
}

func (l *ledger) add(f func()) { l.mu.Lock(); f(); l.mu.Unlock() }

func TestSIGKILLDuringMixedLoad(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"toolResultTimeoutSeconds":30}`, up.URL+"/v1")), 0o600)
	data := filepath.Join(dir, "data")
	led := &ledger{sessions: map[string]bool{}, messages: map[string][]string{}, seen: map[string][]api.StreamEvent{}}
	rng := rand.New(rand.NewPCG(1, 2))

	for round := 0; round < rounds; round++ {
		d := start(t, bin, data, cfg)
		verify(t, d, data, led, round)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				load(ctx, d, led, fmt.Sprintf("r%dw%d", round, w))
			}(w)
		}
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		d.Kill() // SIGKILL, mid-whatever
		cancel()
		wg.Wait()
	}
	d := start(t, bin, data, cfg)
	defer func() { d.Kill() }()
	verify(t, d, data, led, rounds)
	if len(led.sessions) == 0 || len(led.memory) == 0 {
		t.Fatalf("the load acknowledged nothing (%d sessions, %d memory writes): the checks proved nothing", len(led.sessions), len(led.memory))
	}
	t.Logf("%d kills; acknowledged: %d sessions, %d memory writes", rounds, len(led.sessions), len(led.memory))
}

// load runs turns with tool calls and memory writes until ctx ends or the service dies.
func load(ctx context.Context, d *proc.Proc, led *ledger, name string) {
	c := api.NewClient(d.URL, token, &http.Client{Timeout: 10 * time.Second})
	for i := 0; ctx.Err() == nil; i++ {
		s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("%s-%d", name, i)})
		if err != nil {
			return
		}
		led.add(func() { led.sessions[s.GeneralSessionID] = true })
		marker := fmt.Sprintf("note %s-%d", name, i)
		var mw api.MemoryWriteResponse
		if c.Do(ctx, "POST", "/v1/memory/write", api.MemoryWriteRequest{Target: "daily", Content: marker}, &mw) == nil {
			led.add(func() { led.memory = append(led.memory, marker) })
		}
		text := fmt.Sprintf("msg %s-%d [[tool notify {\"title\":\"x\"}]]", name, i)
		sid := s.GeneralSessionID
		err = c.ChatStream(ctx, sid, text, func(ev api.StreamEvent) error {
			led.add(func() { led.seen[sid] = append(led.seen[sid], ev) })
			if ev.Type == api.EventToolRequest {
				var tc api.ToolCall
				json.Unmarshal(ev.Data, &tc)
				c.PostToolResult(ctx, sid, api.ToolResult{ID: tc.ID, OK: true, Result: "shown"})
			}
			return nil
		})
		// The stream of a chat starts with its user.message, sent once the
		// message is stored: its first event proves it was accepted.
		led.add(func() {
			if len(led.seen[sid]) > 0 {
				led.messages[sid] = append(led.messages[sid], text)
				led.unsearched = append(led.unsearched, [2]string{sid, text})
			}
		})
		if err != nil {
			return
		}
	}
}

func verify(t *testing.T, d *proc.Proc, data string, led *ledger, round int) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "jarvis.db")+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("round %d: integrity_check %q %v", round, res, err)
	}
	var running int
	db.QueryRow(`SELECT COUNT(*) FROM turns WHERE status = 'running'`).Scan(&running)
	db.Close()
	if running != 0 {
		t.Fatalf("round %d: %d turns still marked running after the restart", round, running)
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	c := api.NewClient(d.URL, token, nil)
	ctx := context.Background()
	for sid := range led.sessions {
		var tr api.Transcript
		if err := c.Do(ctx, "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
			t.Fatalf("round %d: acknowledged session %s: %v", round, sid, err)
		}
		have := map[string]bool{}
		for _, m := range tr.Messages {
			if m.Role == "user" {
				have[m.Text] = true
			}
		}
		for _, want := range led.messages[sid] {
			if !have[want] {
				t.Fatalf("round %d: accepted message %q missing from session %s", round, want, sid)
			}
		}
		// Replay: the stored stream matches what clients saw, ids
		// consecutive, and every turn ended (final, error or interrupted).
		seen := led.seen[sid]
		if len(seen) == 0 {
			continue
		}
		var all []api.StreamEvent
		c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
			all = append(all, ev)
			if ev.ID == strconv.FormatInt(tr.LastEventID, 10) {
				return api.ErrStopStream
			}
			return nil
		})
		byID := map[string]api.StreamEvent{}
		for i, ev := range all {
			if ev.ID != strconv.Itoa(i+1) {
				t.Fatalf("round %d: session %s replay event %d has id %s", round, sid, i, ev.ID)
			}
			byID[ev.ID] = ev
		}
		for _, ev := range seen {
			got, ok := byID[ev.ID]
			if !ok || got.Type != ev.Type || string(got.Data) != string(ev.Data) {
				t.Fatalf("round %d: session %s: event %s seen by a client as %s %s, stored as %s %s", round, sid, ev.ID, ev.Type, ev.Data, got.Type, got.Data)
			}
		}
		open := map[string]bool{}
		for _, ev := range all {
			var x struct {
				TurnID string `json:"turn_id"`
				Code   string `json:"code"`
			}
			json.Unmarshal(ev.Data, &x)
			switch ev.Type {
			case api.EventUserMessage:
				open[x.TurnID] = true
			case api.EventFinal, api.EventError:
				delete(open, x.TurnID)
			}
		}
		if len(open) > 0 {
			t.Fatalf("round %d: session %s has turns that never ended on its stream: %v", round, sid, open)
		}
	}
	// Search finds every message accepted since the last check, those the
	// kill left out of the search index too.
	for _, m := range led.unsearched {
		var res api.SessionSearch
		if err := c.Do(ctx, "GET", "/v1/sessions/search?limit=200&q="+url.QueryEscape(m[1]), nil, &res); err != nil {
			t.Fatalf("round %d: search %q: %v", round, m[1], err)
		}
		if len(res.Results) != 1 || res.Results[0].Session.SessionID != m[0] {
			t.Fatalf("round %d: search for accepted message %q found %+v, want session %s", round, m[1], res.Results, m[0])
		}
	}
	led.unsearched = nil
	// Every acknowledged memory write is in a daily file.
	var notes strings.Builder
	files, _ := filepath.Glob(filepath.Join(data, "memory", "*.md"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		notes.Write(b)
	}
	for _, m := range led.memory {
		if !strings.Contains(notes.String(), m) {
			t.Fatalf("round %d: acknowledged memory write %q is missing", round, m)
		}
	}
}
