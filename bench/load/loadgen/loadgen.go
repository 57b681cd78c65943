// Package loadgen drives the real jarvis-service binary with mixed load on
// loopback and checks that no event is lost or duplicated: N chat sessions
// run tool-using turns against the scripted OpenAI-compatible upstream
// (internal/testpeer; every turn calls the notify tool, which the session's
// own SSE follower answers as the desktop would), while M external agents
// post replies to their callback URLs. Each session has one SSE client
// following its stream from the start.
//
// Checks, per session: the follower's event ids are 1, 2, 3, … with no gap
// and no repeat; every turn the client started (POST /v1/chat answered)
// has its user.message and ends (assistant.final or error) on the stream;
// every accepted callback's event (the id its POST answered) arrives once,
// with the posted text.
//
// Figures: turn time (POST /v1/chat with stream:false, tool round trip
// included), callback POST → its event on the follower, and the service's
// CPU (user+sys from /proc/PID/stat) over the load window.
//
// Every POST carries an Idempotency-Key (api.Client's own for chat messages
// and tool results, one per reply for callbacks), as the desktop's do: a POST
// on a pooled connection that the server closed under it is then resent by
// the Transport and applied once by the service.
//
// Used by bench/load (the program) and tests/load (a short run). Run
// spawns its own goroutines and waits for all of them before returning.
package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/api"
	"jarvis/internal/measure"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

// Options of a run.
type Options struct {
	Binary    string        // the jarvis-service binary (see Build)
	Sessions  int           // chat sessions running turns (default 200)
	Externals int           // external agents posting callbacks (default 50)
	Duration  time.Duration // load window (default 60 s)
	Dir       string        // data and config; default a temp dir removed after the run
}

// Report is what a run measured and found.
type Report struct {
	Sessions, Externals int
	Duration            time.Duration
	Turns               int // turns that ended with their final on the stream
	TurnErrors          int // turns that ended with an error event (also counted as ended)
	Callbacks           int // accepted callbacks whose event arrived
	Events              int64
	Turn, Callback      []time.Duration // sorted samples
	CPUSeconds          float64         // service user+sys over the window
	Lost, Duplicated    int             // ids missing or repeated on a follower
	Unended             int             // turns started whose end never arrived
	Missing             int             // accepted callbacks whose event never arrived
	Failures            []string        // first problems, for the log
}

// OK reports whether nothing was lost, duplicated or left unended.
func (r *Report) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.Unended == 0 && r.Missing == 0 && len(r.Failures) == 0
}

const token = "load-token-0123456789abcdef"

// follower is one session's SSE client and the ledger of what it saw.
type follower struct {
	sid string

	mu       sync.Mutex
	last     int64
	lost     int
	dup      int
	started  map[string]bool      // turn ids of user.message events
	ended    map[string]bool      // turn ids of assistant.final / error
	errored  int                  // error events
	byText   map[string]time.Time // external reply text → arrival
	byID     map[int64]string     // event id → external reply text
	changed  chan struct{}
	problems []string
}

func newFollower(sid string) *follower {
	return &follower{sid: sid, started: map[string]bool{}, ended: map[string]bool{}, byText: map[string]time.Time{},
		byID: map[int64]string{}, changed: make(chan struct{}, 1)}
}

func (f *follower) see(ev api.StreamEvent) {
	id, err := strconv.ParseInt(ev.ID, 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil:
		f.problems = append(f.problems, fmt.Sprintf("session %s: event without a numeric id: %q %s", f.sid, ev.ID, ev.Type))
	case id <= f.last:
		f.dup++
	case id > f.last+1:
		f.lost += int(id - f.last - 1)
		f.last = id
	default:
		f.last = id
	}
	var d struct {
		TurnID string `json:"turn_id"`
		Text   string `json:"text"`
		Origin string `json:"origin"`
	}
	json.Unmarshal(ev.Data, &d)
	switch ev.Type {
	case api.EventUserMessage:
		f.started[d.TurnID] = true
	case api.EventFinal:
		if d.Origin == api.EventOriginExternal {
			if _, ok := f.byText[d.Text]; ok {
				f.dup++
			}
			f.byText[d.Text] = time.Now()
			f.byID[id] = d.Text
		} else {
			f.ended[d.TurnID] = true
		}
	case api.EventError:
		f.ended[d.TurnID] = true
		f.errored++
	}
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until ok holds (under the lock) or the deadline passes.
func (f *follower) waitFor(deadline time.Time, ok func() bool) bool {
	for {
		f.mu.Lock()
		done := ok()
		f.mu.Unlock()
		if done {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		select {
		case <-f.changed:
		case <-time.After(min(left, 50*time.Millisecond)):
		}
	}
}

// extInputs records each external session's callback URL as forwarded by the service.
type extInputs struct {
	mu  sync.Mutex
	cbs map[string]string
}

func (x *extInputs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in api.ExternalInput
	json.NewDecoder(r.Body).Decode(&in)
	x.mu.Lock()
	x.cbs[in.SessionID] = in.CallbackURL
	x.mu.Unlock()
	io.WriteString(w, `{"ok":true}`)
}

// Run starts the service, runs the load for the duration and reports.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Sessions <= 0 {
		o.Sessions = 200
	}
	if o.Externals < 0 {
		o.Externals = 0
	}
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "jarvis-load-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	ins := &extInputs{cbs: map[string]string{}}
	extSrv := httptest.NewServer(ins)
	defer extSrv.Close()

	var agents strings.Builder
	agents.WriteString(`{"agentId":"general","displayName":"General"}`)
	for i := 0; i < o.Externals; i++ {
		fmt.Fprintf(&agents, `,{"agentId":"ext%02d","displayName":"External %d","type":"external","external":{"inputUrl":%q}}`, i, i, extSrv.URL+"/input")
	}
	cfg := filepath.Join(o.Dir, "config.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"toolResultTimeoutSeconds":60,"agents":[%s]}`,
		up.URL+"/v1", agents.String())), 0o600); err != nil {
		return nil, err
	}
	svc, err := proc.Start(o.Binary, []string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(o.Dir, "data"), "--trust-config", "--config", cfg, "--log-level", "error"},
		[]string{"JARVIS_TOKEN=" + token}, true)
	if err != nil {
		return nil, err
	}
	defer svc.Kill()
	base, pid := svc.URL, svc.Cmd.Process.Pid

	tr := &http.Transport{MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	c := api.NewClient(base, token, &http.Client{Transport: tr, Timeout: 2 * time.Minute})
	streamC := api.NewClient(base, token, &http.Client{Transport: tr})

	rep := &Report{Sessions: o.Sessions, Externals: o.Externals, Duration: o.Duration}
	var mu sync.Mutex // guards rep's samples and failures
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(rep.Failures) < 20 {
			rep.Failures = append(rep.Failures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}

	// Sessions and followers first, so that the load window is all load.
	follow, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	var fwg sync.WaitGroup
	var events atomic.Int64
	start := func(sid string) *follower {
		f := newFollower(sid)
		fwg.Add(1)
		go func() {
			defer fwg.Done()
			err := streamC.Stream(follow, sid, "0", func(ev api.StreamEvent) error {
				events.Add(1)
				f.see(ev)
				if ev.Type == api.EventToolRequest {
					var tc api.ToolCall
					json.Unmarshal(ev.Data, &tc)
					if err := c.PostToolResult(follow, sid, api.ToolResult{ID: tc.ID, OK: true, Result: "shown"}); err != nil && follow.Err() == nil {
						fail("session %s: tool result: %v", sid, err)
					}
				}
				return nil
			})
			if err != nil && follow.Err() == nil {
				fail("session %s: stream ended: %v", sid, err)
			}
		}()
		return f
	}
	chats := make([]*follower, o.Sessions)
	for i := range chats {
		s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("load-%d", i)})
		if err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
		chats[i] = start(s.GeneralSessionID)
	}
	exts := make([]*follower, o.Externals)
	cbs := make([]string, o.Externals)
	for i := range exts {
		s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("load-ext-%d", i), AgentID: fmt.Sprintf("ext%02d", i)})
		if err != nil {
			return nil, fmt.Errorf("create external session: %w", err)
		}
		exts[i] = start(s.GeneralSessionID)
		// The forward hands the agent its callback URL.
		if _, err := c.Chat(ctx, s.GeneralSessionID, "hello agent"); err != nil {
			return nil, fmt.Errorf("forward to external agent: %w", err)
		}
		ins.mu.Lock()
		cbs[i] = ins.cbs[s.GeneralSessionID]
		ins.mu.Unlock()
		if cbs[i] == "" {
			return nil, fmt.Errorf("external agent %d got no callback URL", i)
		}
	}

	cpu0 := measure.CPU(pid)
	window, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	type turnLedger struct {
		f   *follower
		ids []string
	}
	ledgers := make([]turnLedger, o.Sessions)
	type cbLedger struct {
		f    *follower
		sent map[int64]string
	}
	cbLedgers := make([]cbLedger, o.Externals)
	var wg sync.WaitGroup
	for i, f := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; window.Err() == nil; n++ {
				t0 := time.Now()
				r, err := c.Chat(ctx, f.sid, fmt.Sprintf("turn %d [[tool notify {\"title\":\"load %d\"}]]", n, n))
				if err != nil {
					fail("session %s turn %d: %v", f.sid, n, err)
					return
				}
				d := time.Since(t0)
				ledgers[i].ids = append(ledgers[i].ids, r.TurnID)
				mu.Lock()
				rep.Turn = append(rep.Turn, d)
				mu.Unlock()
			}
		}()
		ledgers[i].f = f
	}
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	for i, f := range exts {
		cbLedgers[i] = cbLedger{f: f, sent: map[int64]string{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; window.Err() == nil; n++ {
				text := fmt.Sprintf("reply %d from agent %d", n, i)
				t0 := time.Now()
				// The agent keys each reply, as a sender that may retry must:
				// the Transport then resends it on a connection that died
				// under it, and the service applies it once.
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, cbs[i], strings.NewReader(text))
				if err != nil {
					fail("external %d: %v", i, err)
					return
				}
				req.Header.Set("Content-Type", "text/plain")
				req.Header.Set(api.IdempotencyKeyHeader, fmt.Sprintf("load-%d-%d", i, n))
				resp, err := hc.Do(req)
				if err != nil {
					fail("external %d: %v", i, err)
					return
				}
				var out api.ExternalMessageResponse
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || out.EventID == 0 {
					fail("external %d: callback answered %d %s", i, resp.StatusCode, b)
					return
				}
				cbLedgers[i].sent[out.EventID] = text
				var at time.Time
				if !f.waitFor(time.Now().Add(30*time.Second), func() bool { at = f.byText[text]; return !at.IsZero() }) {
					return // counted as missing below
				}
				mu.Lock()
				rep.Callback = append(rep.Callback, at.Sub(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	cpu1 := measure.CPU(pid)
	rep.CPUSeconds = (cpu1 - cpu0).Seconds()

	// Drain: every started turn must end on its stream, every accepted
	// callback's event must arrive.
	deadline := time.Now().Add(30 * time.Second)
	for _, l := range ledgers {
		f := l.f
		f.waitFor(deadline, func() bool {
			for _, id := range l.ids {
				if !f.ended[id] {
					return false
				}
			}
			return true
		})
		f.mu.Lock()
		for _, id := range l.ids {
			if !f.started[id] || !f.ended[id] {
				rep.Unended++
			}
		}
		// Every user.message on the stream belongs to a turn this client started.
		if len(f.started) != len(l.ids) {
			rep.Failures = append(rep.Failures, fmt.Sprintf("session %s: %d user.message events for %d turns started", f.sid, len(f.started), len(l.ids)))
		}
		rep.Turns += len(l.ids)
		rep.TurnErrors += f.errored
		f.mu.Unlock()
	}
	for _, l := range cbLedgers {
		f := l.f
		f.waitFor(deadline, func() bool {
			for id := range l.sent {
				if _, ok := f.byID[id]; !ok {
					return false
				}
			}
			return true
		})
		f.mu.Lock()
		for id, text := range l.sent {
			if f.byID[id] != text {
				rep.Missing++
			} else {
				rep.Callbacks++
			}
		}
		f.mu.Unlock()
	}
	stopFollow()
	fwg.Wait()
	for _, f := range append(append([]*follower{}, chats...), exts...) {
		rep.Lost += f.lost
		rep.Duplicated += f.dup
		rep.Failures = append(rep.Failures, f.problems...)
	}
	rep.Events = events.Load()
	return rep, nil
}

// Markdown writes the report as a table.
func (r *Report) Markdown(w io.Writer) {
	secs := r.Duration.Seconds()
	fmt.Fprintf(w, "| metric | value |\n|---|---|\n")
	fmt.Fprintf(w, "| chat sessions (tool-using turns) | %d |\n", r.Sessions)
	fmt.Fprintf(w, "| external agents (callbacks) | %d |\n", r.Externals)
	fmt.Fprintf(w, "| load window | %.0f s |\n", secs)
	fmt.Fprintf(w, "| turns ended | %d (%.0f/s; %d with an error event) |\n", r.Turns, float64(r.Turns)/secs, r.TurnErrors)
	fmt.Fprintf(w, "| turn time p50 / p99 | %s / %s |\n", measure.Ms(measure.Percentile(r.Turn, 50)), measure.Ms(measure.Percentile(r.Turn, 99)))
	fmt.Fprintf(w, "| callbacks delivered | %d (%.0f/s) |\n", r.Callbacks, float64(r.Callbacks)/secs)
	fmt.Fprintf(w, "| callback POST → event p50 / p99 | %s / %s |\n", measure.Ms(measure.Percentile(r.Callback, 50)), measure.Ms(measure.Percentile(r.Callback, 99)))
	fmt.Fprintf(w, "| events received by SSE clients | %d |\n", r.Events)
	fmt.Fprintf(w, "| service CPU (user+sys) | %.1f s (%.0f%% of one core) |\n", r.CPUSeconds, 100*r.CPUSeconds/secs)
	fmt.Fprintf(w, "| lost / duplicated events | %d / %d |\n", r.Lost, r.Duplicated)
	fmt.Fprintf(w, "| turns started but not ended / callbacks without their event | %d / %d |\n", r.Unended, r.Missing)
}
