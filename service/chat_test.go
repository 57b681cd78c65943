package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service/config"
)

// TestChatStreamCarriesSessionEvents: the response stream of POST /v1/chat
// carries exactly the events of the turn that the session stream carries,
// user.message included, with the same ids and data.
func TestChatStreamCarriesSessionEvents(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-same")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var session collect
	ended := make(chan struct{})
	go e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
		session.add(ev)
		if ev.Type == api.EventFinal {
			close(ended)
			return api.ErrStopStream
		}
		return nil
	})
	var chat collect
	err := e.c.ChatStream(ctx, sid, `first [[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		chat.add(ev)
		e.answerTools(sid, func(api.ToolCall) api.ToolResult { return api.ToolResult{OK: true, Result: "shown"} })(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-ended
	a, b := chat.all(), session.all()
	if len(a) != len(b) {
		t.Fatalf("chat stream %v, session stream %v", types(a), types(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Type != b[i].Type || string(a[i].Data) != string(b[i].Data) {
			t.Fatalf("event %d: chat stream %s %s %s, session stream %s %s %s", i, a[i].ID, a[i].Type, a[i].Data, b[i].ID, b[i].Type, b[i].Data)
		}
	}
	if a[0].Type != api.EventUserMessage {
		t.Fatalf("first event %s, want user.message", a[0].Type)
	}
}

func TestChatStreamWithoutTools(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	var got collect
	if err := e.c.ChatStream(context.Background(), sid, "hello there", func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	evs := got.all()
	// The user's message, deltas, then one final. Deltas may be coalesced
	// when they arrive faster than they are stored, so their number is not
	// fixed; their text is.
	if len(evs) == 0 || evs[0].Type != api.EventUserMessage || text(evs[:1], api.EventUserMessage) != "hello there" {
		t.Fatalf("the stream does not start with the user's message: %v", types(evs))
	}
	evs = evs[1:]
	ts := types(evs)
	if len(ts) < 2 || ts[len(ts)-1] != api.EventFinal || slices.ContainsFunc(ts[:len(ts)-1], func(x string) bool { return x != api.EventDelta }) {
		t.Fatalf("events = %v, want deltas then assistant.final", ts)
	}
	if d, f := text(evs, api.EventDelta), text(evs, api.EventFinal); d != "You said: hello there" || f != d {
		t.Fatalf("deltas %q final %q", d, f)
	}
	for i, ev := range evs {
		if ev.ID == "" || (i > 0 && ev.ID == evs[i-1].ID) {
			t.Fatalf("event %d has id %q", i, ev.ID)
		}
	}
	// The upstream saw the system prompt, the user's message and the tools.
	reqs := e.upstream.Requests()
	if len(reqs) != 1 || reqs[0].Model != "test-model" || !reqs[0].Stream {
		t.Fatalf("upstream requests = %+v", reqs)
	}
	msgs := reqs[0].Messages
	if msgs[0].Role != "system" || !strings.Contains(msgs[0].Content, "## Available tools") || msgs[len(msgs)-1].Content != "hello there" {
		t.Fatalf("messages = %+v", msgs)
	}
	if len(reqs[0].Tools) == 0 {
		t.Fatal("no tools offered")
	}
	params, _ := json.Marshal(reqs[0].Tools[0].Function.Parameters)
	if !strings.Contains(string(params), `"reason"`) {
		t.Fatalf("tool schema lacks the reason property: %s", params)
	}
}

func TestChatNonStream(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	r, err := e.c.Chat(context.Background(), sid, "plan my week")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Assistant.Text(); got != "You said: plan my week" {
		t.Fatalf("answer %q", got)
	}
	// History is kept: the second turn sends both exchanges.
	if _, err := e.c.Chat(context.Background(), sid, "again"); err != nil {
		t.Fatal(err)
	}
	reqs := e.upstream.Requests()
	roles := []string{}
	for _, m := range reqs[1].Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Fatalf("second turn roles %v, want %v", roles, want)
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	msg := `do it [[tool list_dir {"path":"docs","reason":"to see your files"}]] [[tool notify {"title":"hi"}]]`
	var got collect
	var reqs []api.ToolCall
	var mu sync.Mutex
	err := e.c.ChatStream(context.Background(), sid, msg, func(ev api.StreamEvent) error {
		got.add(ev)
		if ev.Type == api.EventToolRequest {
			mu.Lock()
			reqs = append(reqs, decode[api.ToolCall](t, ev.Data))
			n := len(reqs)
			mu.Unlock()
			if n == 2 { // answer both, the second first
				for _, i := range []int{1, 0} {
					tc := reqs[i]
					go func() {
						if err := e.c.PostToolResult(context.Background(), sid, api.ToolResult{ID: tc.ID, OK: true, Result: "result of " + tc.Name}); err != nil {
							t.Errorf("post: %v", err)
						}
					}()
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Name != "list_dir" || reqs[1].Name != "notify" {
		t.Fatalf("tool requests %+v", reqs)
	}
	if string(reqs[0].Arguments) != `{"path":"docs"}` || reqs[0].Reason != "to see your files" || reqs[0].Risk != "safe" {
		t.Fatalf("first request %+v args %s", reqs[0], reqs[0].Arguments)
	}
	evs := got.all()
	var results []api.ToolResult
	for _, ev := range evs {
		if ev.Type == api.EventToolResult {
			results = append(results, decode[api.ToolResult](t, ev.Data))
		}
	}
	if len(results) != 2 || results[0].ID != reqs[1].ID || !results[0].OK || results[0].Source != "desktop" {
		t.Fatalf("tool results %+v (want the notify result first)", results)
	}
	if f := text(evs, api.EventFinal); f != "Tool results: result of list_dir; result of notify" {
		t.Fatalf("final %q", f)
	}
	// The model got both results, each with its call's id (the one the
	// desktop saw: one id per call).
	up := e.upstream.Requests()
	last := up[len(up)-1].Messages
	tools := last[len(last)-2:]
	if tools[0].Role != "tool" || tools[0].ToolCallID != reqs[0].ID || tools[1].ToolCallID != reqs[1].ID || tools[0].Content != "result of list_dir" {
		t.Fatalf("tool messages to the model: %+v", tools)
	}
}

func TestChatNonStreamWithTools(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The stream answers the tool requests; it starts from the session's
	// first event, so it sees them whenever it connects.
	go e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
		if ev.Type == api.EventReset {
			t.Errorf("unexpected reset")
		}
		e.answerTools(sid, func(tc api.ToolCall) api.ToolResult { return api.ToolResult{OK: true, Result: "ran " + tc.Name} })(ev)
		return nil
	})
	r, err := e.c.Chat(context.Background(), sid, `[[tool open_url {"url":"https://example.com"}]]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Assistant.Text(); got != "Tool results: ran open_url" {
		t.Fatalf("answer %q", got)
	}
}

func TestToolResultRejections(t *testing.T) {
	e := newEnv(t)
	a, b := e.session("a"), e.session("b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var callID string
	got := make(chan struct{})
	go e.c.ChatStream(ctx, a, `[[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		if ev.Type == api.EventToolRequest {
			callID = decode[api.ToolCall](t, ev.Data).ID
			close(got)
		}
		return nil
	})
	<-got
	status := func(err error) (int, string) {
		var se *api.StatusError
		if !errors.As(err, &se) {
			return 0, fmt.Sprint(err)
		}
		return se.Status, se.Err.Code
	}
	if s, c := status(e.c.PostToolResult(ctx, a, api.ToolResult{ID: "nope", OK: true})); s != 404 || c != "tool_call_not_found" {
		t.Fatalf("unknown id: %d %s", s, c)
	}
	if s, c := status(e.c.PostToolResult(ctx, b, api.ToolResult{ID: callID, OK: true})); s != 404 || c != "tool_call_not_found" {
		t.Fatalf("another session's call: %d %s", s, c)
	}
	if s, c := status(e.c.PostToolResult(ctx, "g_missing", api.ToolResult{ID: callID, OK: true})); s != 404 || c != "session_not_found" {
		t.Fatalf("unknown session: %d %s", s, c)
	}
	if err := e.c.PostToolResult(ctx, a, api.ToolResult{ID: callID, OK: true, Result: "shown"}); err != nil {
		t.Fatal(err)
	}
	if s, c := status(e.c.PostToolResult(ctx, a, api.ToolResult{ID: callID, OK: true})); s != 409 || c != "tool_result_duplicate" {
		t.Fatalf("second result: %d %s", s, c)
	}
}

func TestToolResultTimeoutFailsClosed(t *testing.T) {
	e := newEnv(t, withToolTimeout(time.Second))
	sid := e.session("j1")
	var got collect
	if err := e.c.ChatStream(context.Background(), sid, `[[tool write_file {"path":"a.txt","content":"x"}]]`, func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	evs := got.all()
	var res api.ToolResult
	for _, ev := range evs {
		if ev.Type == api.EventToolResult {
			res = decode[api.ToolResult](t, ev.Data)
		}
	}
	if res.OK || res.Source != "timeout" || res.Error == nil || !strings.Contains(*res.Error, "denied") {
		t.Fatalf("timeout result %+v", res)
	}
	up := e.upstream.Requests()
	last := up[len(up)-1].Messages
	if m := last[len(last)-1]; m.Role != "tool" || !strings.Contains(m.Content, "denied") {
		t.Fatalf("the model was not told: %+v", m)
	}
	if f := text(evs, api.EventFinal); !strings.Contains(f, "denied") {
		t.Fatalf("final %q", f)
	}
}

func TestToolOutsideAgentScopeIsRefused(t *testing.T) {
	e := newEnv(t)
	c := *e.cfg
	c.Agents = []config.Agent{{AgentID: "general", DisplayName: "G", Type: "chat", ToolAllowlist: []string{"notify"}}}
	e.svc.SetConfig(&c)
	sid := e.session("j1")
	var got collect
	if err := e.c.ChatStream(context.Background(), sid, `[[tool run_command {"program":"rm"}]]`, func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	evs := got.all()
	if slices.Contains(types(evs), api.EventToolRequest) {
		t.Fatal("a tool outside the agent's scope reached the desktop")
	}
	var res api.ToolResult
	for _, ev := range evs {
		if ev.Type == api.EventToolResult {
			res = decode[api.ToolResult](t, ev.Data)
		}
	}
	if res.OK || res.Source != "service" || !strings.Contains(*res.Error, "not allowed") {
		t.Fatalf("result %+v", res)
	}
	// And it was never offered.
	for _, tool := range e.upstream.Requests()[0].Tools {
		if tool.Function.Name != "notify" {
			t.Fatalf("offered %s", tool.Function.Name)
		}
	}
}

func TestUpstreamFailures(t *testing.T) {
	cases := []struct {
		name, msg, code string
	}{
		{"unauthorized", "[[status 401]]", "upstream_auth"},
		{"rate limited", "[[status 429]]", "upstream_rate_limited"},
		{"server error", "[[status 500]]", "upstream_error"},
		{"bad gateway", "[[status 502]]", "upstream_error"},
		{"malformed stream", "[[malformed]]", "upstream_malformed"},
		{"truncated stream", "[[truncate]] [[deltas 3]]", "upstream_malformed"},
		{"timeout", "[[hang]]", "upstream_timeout"},
	}
	e := newEnv(t)
	c := *e.cfg
	c.UpstreamTimeoutSeconds = 1
	e.svc.SetConfig(&c)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sid := e.session("j-" + tc.name)
			var got collect
			if err := e.c.ChatStream(context.Background(), sid, tc.msg, func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
				t.Fatal(err)
			}
			evs := got.all()
			last := evs[len(evs)-1]
			if last.Type != api.EventError {
				t.Fatalf("last event %s", last.Type)
			}
			ee := decode[api.ErrorEvent](t, last.Data)
			if ee.Code != tc.code || ee.Message == "" {
				t.Fatalf("error %+v, want code %s", ee, tc.code)
			}
			// The session stays usable and the user's message is stored.
			r, err := e.c.Chat(context.Background(), sid, "still there?")
			if err != nil || r.Assistant.Text() != "You said: still there?" {
				t.Fatalf("after failure: %v %+v", err, r)
			}
			var tr api.Transcript
			if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
				t.Fatal(err)
			}
			if tr.Messages[0].Role != "user" || tr.Messages[0].Text != tc.msg {
				t.Fatalf("transcript %+v", tr.Messages)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		c := *testConfig(url + "/v1")
		e.svc.SetConfig(&c)
		sid := e.session("j-refused")
		_, err := e.c.Chat(context.Background(), sid, "hi")
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusBadGateway || se.Err.Code != "upstream_unreachable" {
			t.Fatalf("err %v", err)
		}
	})
}

func TestNoProviderConfigured(t *testing.T) {
	e := newEnv(t)
	e.svc.SetConfig(config.Defaults()) // OpenAI with no key anywhere
	sid := e.session("j1")
	_, err := e.c.Chat(context.Background(), sid, "hello")
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable || se.Err.Code != "provider_not_configured" {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"JARVIS_SECRET_OPENAI", "keyring", "openai-compatible"} {
		if !strings.Contains(se.Err.Message, want) {
			t.Errorf("message does not say how to configure (%s): %s", want, se.Err.Message)
		}
	}
	var agents api.AgentList
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents.Agents) != 1 || agents.Agents[0].Status.State != "unconfigured" {
		t.Fatalf("agents %+v", agents)
	}
}

func TestCancelStopsUpstreamAndToolWait(t *testing.T) {
	e := newEnv(t)
	for _, msg := range []string{"[[hang]]", `[[tool notify {"title":"x"}]]`} {
		sid := e.session("j-" + msg)
		var got collect
		started := make(chan struct{}, 1)
		done := make(chan error, 1)
		go func() {
			done <- e.c.ChatStream(context.Background(), sid, msg, func(ev api.StreamEvent) error {
				got.add(ev)
				return nil
			})
		}()
		// Wait until the upstream has the request (and, for the tool, the request is out).
		go func() {
			for {
				if strings.Contains(msg, "hang") && len(e.upstream.Requests()) > 0 || slices.Contains(types(got.all()), api.EventToolRequest) {
					started <- struct{}{}
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		<-started
		r, err := e.c.Cancel(context.Background(), sid)
		if err != nil || !r.Cancelled {
			t.Fatalf("cancel: %v %+v", err, r)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		evs := got.all()
		last := evs[len(evs)-1]
		if last.Type != api.EventError || decode[api.ErrorEvent](t, last.Data).Code != "cancelled" {
			t.Fatalf("%s: last event %s %s", msg, last.Type, last.Data)
		}
		// Nothing is running any more: a new turn starts at once.
		if _, err := e.c.Chat(context.Background(), sid, "next"); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.c.Cancel(context.Background(), e.session("idle"))
	if err != nil || r.Cancelled {
		t.Fatalf("cancel with nothing running: %v %+v", err, r)
	}
}

func TestSecondTurnWhileRunningIsRefused(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan struct{})
	go e.c.ChatStream(ctx, sid, `[[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		if ev.Type == api.EventToolRequest {
			close(got)
		}
		return nil
	})
	<-got
	_, err := e.c.Chat(context.Background(), sid, "meanwhile")
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != 409 || se.Err.Code != "turn_in_progress" {
		t.Fatalf("err %v", err)
	}
}

// A client that disconnects mid-turn does not stop the turn, and a
// reconnect with Last-Event-ID receives exactly what it missed.
func TestDisconnectMidTurnAndResume(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	ctx, cancel := context.WithCancel(context.Background())
	var first collect
	e.c.ChatStream(ctx, sid, "[[slow 10]] [[deltas 40]]", func(ev api.StreamEvent) error {
		first.add(ev)
		if len(first.all()) == 5 {
			cancel() // drop the connection mid-turn
			return api.ErrStopStream
		}
		return nil
	})
	seen := first.all()
	lastID := seen[len(seen)-1].ID
	var rest collect
	err := e.c.Stream(context.Background(), sid, lastID, func(ev api.StreamEvent) error {
		rest.add(ev)
		if ev.Type == api.EventFinal || ev.Type == api.EventError {
			return api.ErrStopStream
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := append(seen, rest.all()...)
	if d, f := text(all, api.EventDelta), text(all, api.EventFinal); f == "" || d != f {
		t.Fatalf("resumed text %q != final %q", d, f)
	}
	assertConsecutiveIDs(t, all)
}

func assertConsecutiveIDs(t *testing.T, evs []api.StreamEvent) {
	t.Helper()
	var prev int
	for i, ev := range evs {
		var n int
		fmt.Sscan(ev.ID, &n)
		if i > 0 && n != prev+1 {
			t.Fatalf("event %d has id %s after %d: lost or repeated", i, ev.ID, prev)
		}
		prev = n
	}
}

func TestReplayAfterRestart(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	var orig collect
	// Paced, so that every delta is its own event (a flood is coalesced).
	if err := e.c.ChatStream(context.Background(), sid, "[[slow 1]] [[deltas 30]]", func(ev api.StreamEvent) error { orig.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	// A turn left waiting on a tool when the service stops is interrupted.
	got := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go e.c.ChatStream(ctx, sid, `[[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		if ev.Type == api.EventToolRequest {
			close(got)
		}
		return nil
	})
	<-got
	cancel()
	e.stop()
	e.start()
	want := orig.all()
	from := want[9].ID
	var replay collect
	err := e.c.Stream(context.Background(), sid, from, func(ev api.StreamEvent) error {
		replay.add(ev)
		if ev.Type == api.EventError {
			return api.ErrStopStream
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := replay.all()
	assertConsecutiveIDs(t, append([]api.StreamEvent{want[9]}, evs...))
	for i, ev := range want[10:] {
		if evs[i].ID != ev.ID || evs[i].Type != ev.Type || string(evs[i].Data) != string(ev.Data) {
			t.Fatalf("replayed event %d = %+v, want %+v", i, evs[i], ev)
		}
	}
	last := evs[len(evs)-1]
	if ee := decode[api.ErrorEvent](t, last.Data); ee.Code != "interrupted" {
		t.Fatalf("interrupted turn reported as %+v", ee)
	}
	// The session works after the restart, with its history.
	r, err := e.c.Chat(context.Background(), sid, "after restart")
	if err != nil || r.Assistant.Text() != "You said: after restart" {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestUnknownLastEventIDIsSaidExplicitly(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	if _, err := e.c.Chat(context.Background(), sid, "hi"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"999", "abc", "-1"} {
		var first api.StreamEvent
		e.c.Stream(context.Background(), sid, id, func(ev api.StreamEvent) error { first = ev; return api.ErrStopStream })
		if first.Type != api.EventReset {
			t.Fatalf("Last-Event-ID %s: first event %s", id, first.Type)
		}
		r := decode[api.ResetEvent](t, first.Data)
		if r.LastEventID != id || r.LatestID == 0 {
			t.Fatalf("reset %+v", r)
		}
	}
}

func TestHeartbeatOnIdleStream(t *testing.T) {
	e := newEnv(t, withHeartbeat(50*time.Millisecond))
	sid := e.session("j1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/stream?general_session_id="+sid, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 0, 256)
	tmp := make([]byte, 64)
	for strings.Count(string(buf), ": heartbeat\n") < 2 {
		n, err := resp.Body.Read(tmp)
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, buf)
		}
		buf = append(buf, tmp[:n]...)
	}
}

func TestConcurrentSessionsWithTools(t *testing.T) {
	e := newEnv(t)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sid := e.session(fmt.Sprintf("j%d", i))
			var got collect
			msg := fmt.Sprintf(`session %d [[tool read_file {"path":"f%d.txt"}]]`, i, i)
			err := e.c.ChatStream(context.Background(), sid, msg, func(ev api.StreamEvent) error {
				got.add(ev)
				e.answerTools(sid, func(tc api.ToolCall) api.ToolResult {
					return api.ToolResult{OK: true, Result: fmt.Sprintf("content %d", i)}
				})(ev)
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
			if f := text(got.all(), api.EventFinal); f != fmt.Sprintf("Tool results: content %d", i) {
				errs <- fmt.Errorf("session %d final %q", i, f)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if res, err := e.svc.Store().IntegrityCheck(context.Background()); err != nil || res != "ok" {
		t.Fatalf("integrity %q %v", res, err)
	}
}

var _ = testpeer.Script{}
var _ = openai.ChatMessageRoleTool

// A flood of deltas reaches the client whole and in order, in at most as
// many events (deltas that arrive while others wait to be stored are
// coalesced).
func TestDeltaFloodIsRelayedWhole(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	var got collect
	if err := e.c.ChatStream(context.Background(), sid, "[[deltas 3000]]", func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&want, "w%d ", i)
	}
	evs := got.all()
	n := strings.Count(strings.Join(types(evs), " "), api.EventDelta)
	if d := text(evs, api.EventDelta); d != want.String() || text(evs, api.EventFinal) != d {
		t.Fatalf("relayed %d bytes in %d deltas, want %d bytes", len(d), n, want.Len())
	}
	if n < 1 || n > 3000 {
		t.Fatalf("%d delta events", n)
	}
	t.Logf("3000 deltas relayed in %d events", n)
}
