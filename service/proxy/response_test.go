package proxy_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/service/proxy"
)

func TestParseCallback(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		mapping proxy.Mapping
		want    proxy.Response // Raw is not compared
		err     error
	}{
		{name: "seed example, partial",
			body: `{"messageId":"msg-123","output":[{"type":"text","content":"Final answer"}],
			        "debug":[{"type":"thought","content":"Analyzing the query..."},{"type":"thought","content":"Processing data..."}],
			        "sessionInfo":{"status":"busy","conversationState":"ACTIVE","sessionId":"s"}}`,
			want: proxy.Response{MessageID: "msg-123", Output: "Final answer", Parts: []proxy.Part{{Type: "text", Content: "Final answer"}},
				Thoughts: []string{"Analyzing the query...", "Processing data..."}, Status: "busy", ConversationState: "ACTIVE"}},
		{name: "sessionInfo.output is the whole answer and final",
			body: `{"output":[{"type":"text","content":"tail"}],"sessionInfo":{"status":"idle","output":{"type":"text","content":"whole answer"}}}`,
			want: proxy.Response{Output: "whole answer", Parts: []proxy.Part{{Type: "text", Content: "whole answer"}}, Status: "idle", Final: true}},
		{name: "COMPLETED is final",
			body: `{"output":[{"type":"text","content":"x"}],"sessionInfo":{"conversationState":"COMPLETED"}}`,
			want: proxy.Response{Output: "x", Parts: []proxy.Part{{Type: "text", Content: "x"}}, ConversationState: "COMPLETED", Final: true}},
		{name: "ERROR is final",
			body: `{"sessionInfo":{"status":"error","conversationState":"ERROR"}}`,
			want: proxy.Response{Status: "error", ConversationState: "ERROR", Final: true}},
		{name: "non-text parts are kept but not in Output",
			body: `{"output":[{"type":"text","content":"see"},{"type":"image","content":"https://x/y.png"},{"type":"text","content":"this"}]}`,
			want: proxy.Response{Output: "see\n\nthis", Parts: []proxy.Part{{Type: "text", Content: "see"}, {Type: "image", Content: "https://x/y.png"}, {Type: "text", Content: "this"}}}},
		{name: "mapping: strings, wildcard and numbers",
			body:    `{"reply":{"text":"hi"},"steps":[{"why":"a"},{"why":7}],"s":{"code":200}}`,
			mapping: proxy.Mapping{Output: "reply.text", Thoughts: "steps[*].why", Status: "s.code"},
			want:    proxy.Response{Output: "hi", Parts: []proxy.Part{{Type: "text", Content: "hi"}}, Thoughts: []string{"a", "7"}, Status: "200"}},
		{name: "array at the root",
			body:    `[{"generated_text":"t"}]`,
			mapping: proxy.Mapping{Output: "[0].generated_text"},
			want:    proxy.Response{Output: "t", Parts: []proxy.Part{{Type: "text", Content: "t"}}}},
		{name: "raw NUL bytes are removed and counted, not malformed",
			body: "{\"output\":[{\"type\":\"text\",\"content\":\"a\x00b\"}]}\x00",
			want: proxy.Response{Output: "ab", Parts: []proxy.Part{{Type: "text", Content: "ab"}}, Sanitized: proxy.Sanitized{NULBytes: 2}}},
		{name: "escaped NULs too",
			body: `{"output":[{"type":"text","content":"a\u0000b"}]}`,
			want: proxy.Response{Output: "ab", Parts: []proxy.Part{{Type: "text", Content: "ab"}}, Sanitized: proxy.Sanitized{NULBytes: 1}}},
		{name: "invalid JSON", body: `{"output": [`, err: proxy.ErrMalformed},
		{name: "trailing data", body: `{"messageId":"a"} {"messageId":"b"}`, err: proxy.ErrMalformed},
		{name: "not an object", body: `"just text"`, err: proxy.ErrMalformed},
		{name: "empty", body: `  `, err: proxy.ErrMalformed},
		{name: "nothing recognisable", body: `{"hello":"world"}`, err: proxy.ErrMalformed},
		{name: "bad mapping", body: `{}`, mapping: proxy.Mapping{Output: "a..b"}, err: proxy.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := proxy.ParseCallback([]byte(tt.body), tt.mapping)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Raw) != strings.TrimSpace(strings.ReplaceAll(tt.body, "\x00", "")) { // without raw NULs: JSON again
				t.Errorf("Raw = %s", got.Raw)
			}
			got.Raw = nil
			// Compare through exported fields only.
			if !reflect.DeepEqual(exported(got), exported(tt.want)) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

type exportedResponse struct {
	MessageID, Output, Status, ConversationState string
	Parts                                        []proxy.Part
	Thoughts                                     []string
	Final, Pending                               bool
	Sanitized                                    proxy.Sanitized
}

func exported(r proxy.Response) exportedResponse {
	return exportedResponse{r.MessageID, r.Output, r.Status, r.ConversationState, r.Parts, r.Thoughts, r.Final, r.Pending, r.Sanitized}
}

func mustParse(t *testing.T, body string) proxy.Response {
	t.Helper()
	r, err := proxy.ParseCallback([]byte(body), proxy.Mapping{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTurnStitching(t *testing.T) {
	t.Run("COMPLETED without sessionInfo.output stitches the parts", func(t *testing.T) {
		var turn proxy.Turn
		for _, b := range []string{
			`{"output":[{"type":"text","content":"Hel"}],"debug":[{"type":"thought","content":"t1"}]}`,
			`{"output":[{"type":"text","content":"lo "}]}`,
		} {
			r, err := turn.Add(mustParse(t, b))
			if err != nil || r.Final {
				t.Fatalf("partial: %+v, %v", r, err)
			}
		}
		final, err := turn.Add(mustParse(t, `{"messageId":"m3","output":[{"type":"text","content":"world"}],"debug":[{"type":"thought","content":"t2"}],"sessionInfo":{"status":"idle","conversationState":"COMPLETED"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if !final.Final || final.Output != "Hello world" || final.MessageID != "m3" || final.Status != "idle" ||
			!reflect.DeepEqual(final.Thoughts, []string{"t1", "t2"}) || len(final.Parts) != 3 {
			t.Errorf("final = %+v", final)
		}
		if _, err := turn.Add(mustParse(t, `{"messageId":"late"}`)); !errors.Is(err, proxy.ErrTurnClosed) {
			t.Errorf("late Add err = %v, want ErrTurnClosed", err)
		}
	})
	t.Run("sessionInfo.output wins over the parts", func(t *testing.T) {
		var turn proxy.Turn
		turn.Add(mustParse(t, `{"output":[{"type":"text","content":"draft"}]}`))
		final, _ := turn.Add(mustParse(t, `{"sessionInfo":{"output":{"type":"text","content":"Clean answer"}}}`))
		if final.Output != "Clean answer" {
			t.Errorf("final output = %q", final.Output)
		}
	})
	t.Run("Finish stitches what arrived", func(t *testing.T) {
		var turn proxy.Turn
		turn.Add(mustParse(t, `{"messageId":"a","output":[{"type":"text","content":"one "}]}`))
		turn.Add(mustParse(t, `{"messageId":"b","output":[{"type":"text","content":"two"}],"sessionInfo":{"status":"busy"}}`))
		final, err := turn.Finish()
		if err != nil || !final.Final || final.Output != "one two" || final.MessageID != "b" || final.Status != "busy" {
			t.Errorf("Finish = %+v, %v", final, err)
		}
		if _, err := turn.Finish(); !errors.Is(err, proxy.ErrTurnClosed) {
			t.Errorf("second Finish err = %v", err)
		}
	})
	t.Run("concurrent callbacks: exactly one final", func(t *testing.T) {
		var turn proxy.Turn
		var wg sync.WaitGroup
		var mu sync.Mutex
		finals, closed := 0, 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := `{"output":[{"type":"text","content":"x"}]}`
				if i%5 == 4 {
					body = `{"output":[{"type":"text","content":"x"}],"sessionInfo":{"conversationState":"COMPLETED"}}`
				}
				r, err := turn.Add(mustParse(t, body))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					closed++
				} else if r.Final {
					finals++
				}
			}()
		}
		wg.Wait()
		if finals != 1 || !turn.Done() {
			t.Errorf("finals = %d (closed %d), want exactly 1", finals, closed)
		}
	})
}

func TestValidate(t *testing.T) {
	base := func() proxy.Definition {
		return proxy.Definition{Profile: proxy.Profile{Name: "n"}, URL: "https://agent.example/run"}
	}
	tests := []struct {
		name  string
		edit  func(*proxy.Definition)
		field string // "" means valid
	}{
		{"minimal is valid", func(*proxy.Definition) {}, ""},
		{"full is valid", func(d *proxy.Definition) {
			d.Method = "put"
			d.Headers = map[string]string{"Authorization": "Bearer {{secret:k}}", "X-A": "b"}
			d.Body = []byte(`{"q":"{{input}}"}`)
			d.Stream = &proxy.StreamOptions{Enable: true, StreamMode: "messages"}
			d.Debug = &proxy.DebugOptions{Enable: true, DebugMode: "full"}
			d.ResponseMapping = proxy.Mapping{Output: "choices[0].message.content"}
			d.TimeoutSeconds = 120
		}, ""},
		{"template as a JSON string", func(d *proxy.Definition) { d.Body = []byte(`"{\"n\": {{metadata.n}}}"`) }, ""},
		{"missing url", func(d *proxy.Definition) { d.URL = "" }, "url"},
		{"relative url", func(d *proxy.Definition) { d.URL = "/run" }, "url"},
		{"ftp url", func(d *proxy.Definition) { d.URL = "ftp://x/y" }, "url"},
		{"placeholder in url", func(d *proxy.Definition) { d.URL = "https://x/{{sessionId}}" }, "url"},
		{"bad method", func(d *proxy.Definition) { d.Method = "HEAD" }, "method"},
		{"bad header name", func(d *proxy.Definition) { d.Headers = map[string]string{"Bad Name": "v"} }, "headers.Bad Name"},
		{"reserved header", func(d *proxy.Definition) { d.Headers = map[string]string{"Host": "evil"} }, "headers.Host"},
		{"header line break", func(d *proxy.Definition) { d.Headers = map[string]string{"X": "a\r\nB: c"} }, "headers.X"},
		{"header placeholder not a secret", func(d *proxy.Definition) { d.Headers = map[string]string{"X": "{{input}}"} }, "headers.X"},
		{"GET with a body", func(d *proxy.Definition) { d.Method = "GET"; d.Body = []byte(`{"a":1}`) }, "body"},
		{"unknown placeholder", func(d *proxy.Definition) { d.Body = []byte(`{"a":"{{nope}}"}`) }, "body"},
		{"secret in body", func(d *proxy.Definition) { d.Body = []byte(`{"a":"{{secret:k}}"}`) }, "body"},
		{"token stream mode", func(d *proxy.Definition) { d.Stream = &proxy.StreamOptions{Enable: true, StreamMode: "token"} }, "stream.streamMode"},
		{"bad debug mode", func(d *proxy.Definition) { d.Debug = &proxy.DebugOptions{DebugMode: "verbose"} }, "debug.debugMode"},
		{"negative timeout", func(d *proxy.Definition) { d.TimeoutSeconds = -1 }, "timeoutSeconds"},
		{"huge timeout", func(d *proxy.Definition) { d.TimeoutSeconds = proxy.MaxTimeoutSeconds + 1 }, "timeoutSeconds"},
		{"negative cap", func(d *proxy.Definition) { d.MaxResponseBytes = -5 }, "maxResponseBytes"},
		{"bad mapping path", func(d *proxy.Definition) { d.ResponseMapping.Thoughts = "a[" }, "responseMapping.thoughts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := base()
			tt.edit(&d)
			err := d.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var ve *proxy.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, proxy.ErrInvalid) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if ve.Field != tt.field || !strings.Contains(err.Error(), tt.field+":") {
				t.Errorf("field = %q (%v), want %q", ve.Field, err, tt.field)
			}
		})
	}
	t.Run("reports every problem", func(t *testing.T) {
		d := proxy.Definition{Method: "NOPE", TimeoutSeconds: -1}
		err := d.Validate()
		for _, f := range []string{"method", "url", "timeoutSeconds"} {
			if !strings.Contains(err.Error(), "proxy definition: "+f+":") {
				t.Errorf("%v does not name %s", err, f)
			}
		}
	})
}

func TestDefinitionJSON(t *testing.T) {
	src := `{"profile":{"name":"Billing","description":"d","externalPlatform":"Acme","avatar":"bot.png"},
		"method":"POST","url":"https://x.example/a","headers":{"Authorization":"Bearer {{secret:acme}}"},
		"body":{"q":"{{input}}"},"metadata":{"k":"v"},"debug":{"enable":true,"debugMode":"thoughts"},
		"stream":{"enable":true,"streamMode":"messages"},"responseMapping":{"output":"data.reply.text"},
		"async":true,"timeoutSeconds":30,"routeToUser":true,"maxResponseBytes":2048}`
	var d proxy.Definition
	if err := jsonUnmarshalStrict(src, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Profile.ExternalPlatform != "Acme" || !d.Async || !d.RouteToUser || d.Timeout() != 30*time.Second ||
		d.ResponseMapping.Output != "data.reply.text" || d.MaxResponseBytes != 2048 || d.HealthKey() != "Billing" {
		t.Errorf("decoded %+v", d)
	}
}

func TestHealthTracker(t *testing.T) {
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	h := proxy.NewHealthTracker(func() time.Time { return at })
	if got := h.Get("a"); got.State != proxy.HealthUnknown {
		t.Fatalf("new agent = %+v, want unknown", got)
	}
	h.Record("a", errors.New("boom"))
	h.Record("a", errors.New("bang"))
	if got := h.Get("a"); got.State != proxy.HealthFailing || got.LastError != "bang" || got.Failures != 2 || !got.LastChecked.Equal(at) || !got.LastSuccess.IsZero() {
		t.Errorf("after failures = %+v", got)
	}
	h.Record("a", nil)
	if got := h.Get("a"); got.State != proxy.HealthHealthy || got.LastError != "" || got.Failures != 0 || !got.LastSuccess.Equal(at) {
		t.Errorf("after success = %+v", got)
	}
	h.Forget("a")
	if got := h.Get("a"); got.State != proxy.HealthUnknown {
		t.Errorf("after Forget = %+v", got)
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if i%2 == 0 {
					h.Record("b", nil)
				} else {
					h.Record("b", errors.New("x"))
				}
				h.Get("b")
			}
		}()
	}
	wg.Wait()
	if s := h.Get("b").State; s != proxy.HealthHealthy && s != proxy.HealthFailing {
		t.Errorf("state = %q", s)
	}
}
