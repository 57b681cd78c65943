package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/service/proxy"
	"jarvis/service/proxy/proxytest"
)

// newAgent starts the scripted agent on a real loopback server.
func newAgent(t *testing.T, a *proxytest.Agent) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return srv
}

func newClient(t *testing.T, opts proxy.Options) *proxy.Client {
	t.Helper()
	if opts.Secrets == nil {
		opts.Secrets = func(ref string) (string, error) {
			if ref == "agent-key" {
				return "s3cret", nil
			}
			return "", errors.New("not in keyring")
		}
	}
	c, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func def(url string) proxy.Definition {
	return proxy.Definition{
		Profile:        proxy.Profile{Name: "scripted"},
		URL:            url,
		TimeoutSeconds: 10,
	}
}

func TestCallSyncAgentProtocol(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	c := newClient(t, proxy.Options{})

	d := def(srv.URL + "/sync")
	d.Headers = map[string]string{"Authorization": "Bearer {{secret:agent-key}}", "X-Team": "blue"}
	d.Metadata = map[string]any{"tenant": "t-1", "shared": "from-definition"}
	in := proxy.Input{SessionID: "s-1", UserID: "u-1", Text: "hello", Debug: true,
		Metadata: map[string]any{"shared": "from-input"}}

	resp, err := c.Call(context.Background(), d, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := proxy.Response{
		MessageID:         "msg-final",
		Output:            "echo: hello",
		Parts:             []proxy.Part{{Type: "text", Content: "echo: hello"}},
		Thoughts:          []string{"Analyzing the query...", "Processing data..."},
		Status:            "idle",
		ConversationState: "COMPLETED",
		Final:             true,
	}
	resp.Raw = nil
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}

	reqs := a.Requests()
	if len(reqs) != 1 {
		t.Fatalf("agent saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want the resolved secret", got)
	}
	if got := r.Header.Get("X-Team"); got != "blue" {
		t.Errorf("X-Team = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	wantBody := map[string]any{
		"sessionIdentity": []any{
			map[string]any{"type": "sessionReference", "value": "s-1"},
			map[string]any{"type": "userReference", "value": "u-1"},
		},
		"input":    []any{map[string]any{"type": "text", "content": "hello"}},
		"debug":    map[string]any{"enable": true, "debugMode": "thoughts"},
		"metadata": map[string]any{"tenant": "t-1", "shared": "from-input"},
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request body\n got %v\nwant %v", body, wantBody)
	}
}

func TestCallErrors(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	tests := []struct {
		name   string
		client *http.Client // nil: the default client
		def    func(d proxy.Definition) proxy.Definition
		path   string
		want   error
		check  func(t *testing.T, err error)
	}{
		{name: "malformed JSON", path: "/malformed", want: proxy.ErrMalformed},
		{name: "404", path: "/status/404", check: wantStatus(404)},
		{name: "503", path: "/status/503", check: wantStatus(503)},
		{name: "slower than the timeout", path: "/slow", want: proxy.ErrTimeout,
			def: func(d proxy.Definition) proxy.Definition { d.TimeoutSeconds = 1; return d }},
		{name: "over the size cap, chunked", path: "/big?bytes=5000", want: proxy.ErrTooLarge,
			def: func(d proxy.Definition) proxy.Definition { d.MaxResponseBytes = 1000; return d }},
		{name: "over the size cap, Content-Length", path: "/big?bytes=5000&length=1", want: proxy.ErrTooLarge,
			def: func(d proxy.Definition) proxy.Definition { d.MaxResponseBytes = 1000; return d }},
		{name: "redirect, default client", path: "/redirect", check: wantRedirect(t, a)},
		{name: "redirect, injected client that follows", client: &http.Client{}, path: "/redirect", check: wantRedirect(t, a)},
		{name: "unreachable", want: proxy.ErrUnreachable,
			def: func(d proxy.Definition) proxy.Definition { d.URL = deadURL + "/sync"; return d }},
		{name: "missing secret", path: "/sync", want: proxy.ErrSecret,
			def: func(d proxy.Definition) proxy.Definition {
				d.Headers = map[string]string{"Authorization": "Bearer {{secret:nope}}"}
				return d
			}},
		{name: "invalid definition", path: "/sync", want: proxy.ErrInvalid,
			def: func(d proxy.Definition) proxy.Definition { d.Method = "TRACE"; return d }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, proxy.Options{Client: tt.client})
			d := def(srv.URL + tt.path)
			if tt.def != nil {
				d = tt.def(d)
			}
			_, err := c.Call(context.Background(), d, proxy.Input{SessionID: "s", Text: "hi"}, nil)
			if err == nil {
				t.Fatal("Call succeeded, want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
			if h := c.Health().Get("scripted"); h.State != proxy.HealthFailing || h.LastError != err.Error() {
				t.Errorf("health = %+v, want failing with the error", h)
			}
		})
	}
}

func wantStatus(code int) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var se *proxy.ErrStatus
		if !errors.As(err, &se) {
			t.Fatalf("err = %v, want *ErrStatus", err)
		}
		if se.Code != code {
			t.Errorf("Code = %d, want %d", se.Code, code)
		}
		if !strings.Contains(se.Body, "scripted failure") {
			t.Errorf("Body = %q, want the agent's error excerpt", se.Body)
		}
		if len(se.Body) > 512+len("…") {
			t.Errorf("Body excerpt is %d bytes, want at most 512", len(se.Body))
		}
		if proxy.Kind(err) != "status" {
			t.Errorf("Kind = %q", proxy.Kind(err))
		}
	}
}

func wantRedirect(t *testing.T, a *proxytest.Agent) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var re *proxy.RedirectError
		if !errors.As(err, &re) || !errors.Is(err, proxy.ErrRedirect) {
			t.Fatalf("err = %v, want *RedirectError", err)
		}
		if re.Code != http.StatusFound || re.Location != "/target" {
			t.Errorf("redirect = %d %q, want 302 /target", re.Code, re.Location)
		}
		if !strings.Contains(err.Error(), "/target") {
			t.Errorf("message %q does not name the Location", err)
		}
		if n := a.Hits("/target"); n != 0 {
			t.Errorf("the redirect target was hit %d times; redirects must not be followed", n)
		}
	}
}

func TestCallCancelledIsNotAFailure(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	c := newClient(t, proxy.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Call(ctx, def(srv.URL+"/slow"), proxy.Input{Text: "hi"}, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, proxy.ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled and not ErrTimeout", err)
	}
	if h := c.Health().Get("scripted"); h.State != proxy.HealthUnknown {
		t.Errorf("health after a cancellation = %+v, want unknown", h)
	}
}

func TestCallStreamsMessages(t *testing.T) {
	for _, path := range []string{"/sse", "/ndjson"} {
		t.Run(path, func(t *testing.T) {
			hold := make(chan struct{})
			a := &proxytest.Agent{ChunkDelay: 20 * time.Millisecond, Hold: hold}
			srv := newAgent(t, a)
			c := newClient(t, proxy.Options{})
			d := def(srv.URL + path)
			d.TimeoutSeconds = 5
			d.Stream = &proxy.StreamOptions{Enable: true, StreamMode: "messages"}

			var chunks []proxy.Chunk
			onChunk := func(ch proxy.Chunk) {
				chunks = append(chunks, ch)
				// The agent sends its final message only once Hold is
				// closed: reaching this point with three partials proves
				// they arrived while the stream was still open. Had they
				// been buffered to the end, Call would time out.
				if len(chunks) == 3 {
					close(hold)
				}
			}
			resp, err := c.Call(context.Background(), d, proxy.Input{SessionID: "s", Text: "stream me"}, onChunk)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for i, ch := range chunks {
				if ch.Seq != i {
					t.Errorf("chunk %d has Seq %d", i, ch.Seq)
				}
				texts = append(texts, ch.Text)
			}
			if want := []string{"echo", ": ", "stream me", ""}; !reflect.DeepEqual(texts, want) {
				t.Errorf("chunk texts = %q, want %q", texts, want)
			}
			if !chunks[len(chunks)-1].Final || chunks[0].Final || chunks[0].Status != "busy" {
				t.Errorf("chunk flags wrong: %+v", chunks)
			}
			if !resp.Final || resp.Output != proxytest.Answer("stream me") || resp.Status != "idle" {
				t.Errorf("final = %+v", resp)
			}
			if want := []string{"part 0", "part 1", "part 2"}; !reflect.DeepEqual(resp.Thoughts, want) {
				t.Errorf("thoughts = %q, want %q", resp.Thoughts, want)
			}
			r := a.Requests()[0]
			if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				t.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
			var body proxy.AgentRequest
			json.Unmarshal(r.Body, &body)
			if body.Stream == nil || !body.Stream.Enable || body.Stream.StreamMode != "messages" {
				t.Errorf("request stream = %+v", body.Stream)
			}
		})
	}
}

func TestCallStreamTimeoutMidStream(t *testing.T) {
	a := &proxytest.Agent{Hold: make(chan struct{})} // never released
	srv := newAgent(t, a)
	c := newClient(t, proxy.Options{})
	d := def(srv.URL + "/sse")
	d.TimeoutSeconds = 1
	n := 0
	_, err := c.Call(context.Background(), d, proxy.Input{Text: "x"}, func(proxy.Chunk) { n++ })
	if !errors.Is(err, proxy.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if n != 3 {
		t.Errorf("got %d chunks before the timeout, want 3", n)
	}
}

func TestCallAsyncWithCallbacks(t *testing.T) {
	a := &proxytest.Agent{ChunkDelay: 5 * time.Millisecond}
	srv := newAgent(t, a)

	// The callback route: what the service does with each POST.
	var turn proxy.Turn
	shown := make(chan proxy.Response, 10)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		resp, err := proxy.ParseCallback(body, proxy.Mapping{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := turn.Add(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		shown <- out
	}))
	defer cb.Close()

	c := newClient(t, proxy.Options{})
	d := def(srv.URL + "/async")
	d.Async = true
	resp, err := c.Call(context.Background(), d, proxy.Input{SessionID: "s", Text: "later", CallbackURL: cb.URL + "/proxy/cb?token=t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Pending || resp.Final || resp.MessageID != "ack-1" || resp.Status != "busy" {
		t.Fatalf("ack = %+v, want pending ack-1", resp)
	}

	var partials []string
	timeout := time.After(5 * time.Second)
	for {
		select {
		case r := <-shown:
			if !r.Final {
				partials = append(partials, r.Output)
				continue
			}
			if want := []string{"echo", ": ", "later"}; !reflect.DeepEqual(partials, want) {
				t.Errorf("partials shown = %q, want %q", partials, want)
			}
			if r.Output != proxytest.Answer("later") || r.Status != "idle" || r.ConversationState != "COMPLETED" {
				t.Errorf("final = %+v", r)
			}
			if len(r.Thoughts) != 3 {
				t.Errorf("final thoughts = %q, want the three partials' thoughts", r.Thoughts)
			}
			if !turn.Done() {
				t.Error("turn not done after the final response")
			}
			return
		case <-timeout:
			t.Fatalf("no final callback; partials so far %q", partials)
		}
	}
}

func TestCallAsyncAcknowledgement(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	c := newClient(t, proxy.Options{})
	tests := []struct {
		path    string
		pending bool
		err     error
	}{
		{"/status/202", true, nil}, // a non-protocol ack body is fine
		{"/status/204", true, nil}, // so is none
		{"/status/500", false, nil},
		{"/redirect", false, proxy.ErrRedirect},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			d := def(srv.URL + tt.path)
			d.Async = true
			resp, err := c.Call(context.Background(), d, proxy.Input{Text: "x", CallbackURL: "http://127.0.0.1:9/cb"}, nil)
			if tt.pending {
				if err != nil || !resp.Pending || resp.Final {
					t.Fatalf("Call = %+v, %v; want a pending ack", resp, err)
				}
				rep := c.Test(context.Background(), d, proxy.Input{Text: "x"})
				if !rep.Parsed || !rep.Pending || rep.Error != "" {
					t.Errorf("Test report = %+v", rep)
				}
				return
			}
			if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Fatalf("err = %v, want failure %v", err, tt.err)
			}
		})
	}
}

func TestCustomTemplateAndMapping(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	c := newClient(t, proxy.Options{})

	text := "say \"hi\"\n<b>&</b> \\ ünïcode"
	d := def(srv.URL + "/custom")
	d.Metadata = map[string]any{"tenant": "t-9", "count": 3}
	d.Body = json.RawMessage(`{
		"query": "{{input}}",
		"conversation": "{{sessionId}}",
		"context": {"tenant": "{{metadata.tenant}}", "n": "{{metadata.count}}", "missing": "{{metadata.nope}}",
		            "note": "user {{userId}} said: {{input}}", "debug": "{{debug}}"}
	}`)
	d.ResponseMapping = proxy.Mapping{Output: "data.reply.text", Thoughts: "meta.reasoning", ConversationState: "meta.state"}

	resp, err := c.Call(context.Background(), d, proxy.Input{SessionID: "s-7", UserID: "u\"7", Text: text}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Output != proxytest.Answer(text) {
		t.Errorf("output = %q", resp.Output)
	}
	if want := []string{"looked it up", "answered"}; !reflect.DeepEqual(resp.Thoughts, want) {
		t.Errorf("thoughts = %q, want %q", resp.Thoughts, want)
	}
	if resp.ConversationState != "done" {
		t.Errorf("state = %q", resp.ConversationState)
	}
	var got map[string]any
	if err := json.Unmarshal(a.Requests()[0].Body, &got); err != nil {
		t.Fatalf("rendered body is not JSON: %v\n%s", err, a.Requests()[0].Body)
	}
	want := map[string]any{
		"query":        text,
		"conversation": "s-7",
		"context": map[string]any{"tenant": "t-9", "n": float64(3), "missing": nil,
			"note": "user u\"7 said: " + text, "debug": false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rendered body\n got %v\nwant %v", got, want)
	}

	t.Run("openai shape", func(t *testing.T) {
		d := def(srv.URL + "/openai")
		d.ResponseMapping = proxy.Mapping{Output: "choices[0].message.content", MessageID: "id"}
		resp, err := c.Call(context.Background(), d, proxy.Input{Text: "q"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Output != proxytest.Answer("q") || resp.MessageID != "chatcmpl-1" {
			t.Errorf("resp = %+v", resp)
		}
	})
	t.Run("mapping that finds nothing", func(t *testing.T) {
		d := def(srv.URL + "/openai")
		d.ResponseMapping = proxy.Mapping{Output: "data.reply.text"}
		_, err := c.Call(context.Background(), d, proxy.Input{Text: "q"}, nil)
		if !errors.Is(err, proxy.ErrMalformed) || !strings.Contains(err.Error(), "data.reply.text") {
			t.Errorf("err = %v, want ErrMalformed naming the path", err)
		}
	})
}

func TestTestAction(t *testing.T) {
	a := &proxytest.Agent{}
	srv := newAgent(t, a)
	tick := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { // advances 7 ms per reading
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(7 * time.Millisecond)
		return tick
	}
	c := newClient(t, proxy.Options{Now: now})
	sample := proxy.Input{SessionID: "test", UserID: "tester", Text: "ping", Debug: true}

	tests := []struct {
		name string
		path string
		max  int64
		want func(t *testing.T, r proxy.TestReport)
	}{
		{"sync", "/sync", 0, func(t *testing.T, r proxy.TestReport) {
			if !r.Parsed || r.Status != 200 || r.Output != "echo: ping" || r.AgentStatus != "idle" || len(r.Thoughts) != 2 {
				t.Errorf("report = %+v", r)
			}
			if !strings.Contains(r.RawResponse, `"messageId":"msg-final"`) || !strings.Contains(r.RequestBody, `"content":"ping"`) {
				t.Errorf("raw/request not shown: %+v", r)
			}
			if r.LatencyMs <= 0 {
				t.Errorf("latency = %d", r.LatencyMs)
			}
		}},
		{"streamed", "/ndjson", 0, func(t *testing.T, r proxy.TestReport) {
			if !r.Parsed || r.Chunks != 4 || r.Output != "echo: ping" {
				t.Errorf("report = %+v", r)
			}
		}},
		{"malformed", "/malformed", 0, func(t *testing.T, r proxy.TestReport) {
			if r.Parsed || r.ParseError == "" || r.ErrorKind != "malformed" || r.Status != 200 || !strings.Contains(r.RawResponse, `"cut`) {
				t.Errorf("report = %+v", r)
			}
		}},
		{"server error", "/status/500", 0, func(t *testing.T, r proxy.TestReport) {
			if r.Parsed || r.ParseError != "" || r.Status != 500 || r.ErrorKind != "status" || r.RawResponse == "" {
				t.Errorf("report = %+v", r)
			}
		}},
		{"raw capped", "/big?bytes=100000", 0, func(t *testing.T, r proxy.TestReport) {
			if !r.Parsed || !r.RawTruncated || len(r.RawResponse) != 16<<10 {
				t.Errorf("parsed=%v truncated=%v raw=%d bytes", r.Parsed, r.RawTruncated, len(r.RawResponse))
			}
		}},
		{"too large", "/big?bytes=100000", 50000, func(t *testing.T, r proxy.TestReport) {
			if r.Parsed || r.ErrorKind != "too_large" {
				t.Errorf("report = %+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := def(srv.URL + tt.path)
			d.MaxResponseBytes = tt.max
			tt.want(t, c.Test(context.Background(), d, sample))
		})
	}
}

func TestNewRejectsNegativeCap(t *testing.T) {
	if _, err := proxy.New(proxy.Options{MaxResponse: -1}); err == nil {
		t.Fatal("New accepted a negative MaxResponse")
	}
}
