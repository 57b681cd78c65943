package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/proxy"
	"jarvis/service/roundtable"
)

// dirty is text with NUL bytes and bytes that are not UTF-8, the way a
// broken agent might send them.
const dirty = "before\x00middle\xff\xfe\xc3(after\x00"

func clean(t *testing.T, where, s string) {
	t.Helper()
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		t.Fatalf("%s is not clean: %q", where, s)
	}
	for _, w := range []string{"before", "middle", "after"} {
		if !strings.Contains(s, w) {
			t.Fatalf("%s lost the text around the bad bytes: %q", where, s)
		}
	}
}

// TestProxyCallbackBytesAreCleanedAndRecorded: an async proxy agent posts
// its answer with NUL and invalid UTF-8 (raw in the JSON, and NUL escaped
// as \u0000). What is shown and stored is clean, and the transcript says
// what was removed.
func TestProxyCallbackBytesAreCleanedAndRecorded(t *testing.T) {
	callbacks := make(chan string, 4)
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req proxy.AgentRequest
		json.NewDecoder(r.Body).Decode(&req)
		callbacks <- req.CallbackURL
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"messageId":"ack","sessionInfo":{"status":"busy","conversationState":"ACTIVE"}}`)
	}))
	t.Cleanup(agent.Close)
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	cfg, err := config.Parse("bytes.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"agents":[{"agentId":"general","displayName":"General"},
		  {"agentId":"pxa","displayName":"Async","type":"proxy","proxy":{"url":%q,"async":true,"timeoutSeconds":10,"routeToUser":true}}]}`,
		up.URL+"/v1", agent.URL+"/async")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: token, Secrets: testpeer.NewSecrets(nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	c := api.NewClient(srv.URL, token, nil)
	s, err := c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "bytes", AgentID: "pxa"})
	if err != nil {
		t.Fatal(err)
	}
	sid := s.GeneralSessionID

	var evs []api.StreamEvent
	done := make(chan error, 1)
	go func() {
		done <- c.ChatStream(context.Background(), sid, "hi", func(ev api.StreamEvent) error { evs = append(evs, ev); return nil })
	}()
	var cb string
	select {
	case cb = <-callbacks:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was never called")
	}
	// A partial with a raw invalid byte sequence and an escaped NUL, then
	// the final answer with the same.
	partial := []byte(`{"messageId":"m1","output":[{"type":"text","content":"part ` + "\xff\xfe" + ` one\u0000 "}],"sessionInfo":{"status":"busy"}}`)
	final := []byte(`{"messageId":"m2","output":[{"type":"text","content":"` + strings.ReplaceAll(dirty, "\x00", `\u0000`) + `"}],"sessionInfo":{"status":"idle","conversationState":"COMPLETED","output":"` + strings.ReplaceAll(dirty, "\x00", `\u0000`) + `"}}`)
	for _, b := range [][]byte{partial, final} {
		resp, err := http.Post(cb, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("callback: %d %s", resp.StatusCode, body)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the turn did not end")
	}
	for _, ev := range evs {
		if !utf8.Valid(ev.Data) || bytes.Contains(ev.Data, []byte(`\u0000`)) {
			t.Fatalf("event %s carries bad bytes: %s", ev.Type, ev.Data)
		}
	}
	last := evs[len(evs)-1]
	if last.Type != api.EventFinal {
		t.Fatalf("events %v", typesOf(evs))
	}
	var fin api.TextEvent
	json.Unmarshal(last.Data, &fin)
	clean(t, "the final event", fin.Text)

	var tr api.Transcript
	if err := c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	m := tr.Messages[len(tr.Messages)-1]
	clean(t, "the stored answer", m.Text)
	var meta struct {
		Sanitized *proxy.Sanitized `json:"sanitized"`
	}
	json.Unmarshal(m.Meta, &meta)
	if meta.Sanitized == nil || meta.Sanitized.NULBytes == 0 || meta.Sanitized.InvalidUTF8Bytes == 0 {
		t.Fatalf("the stored answer does not record what was removed: meta %s", m.Meta)
	}
}

// TestRoundtableAnswerBytesAreCleanedAndRecorded: a round-table agent's
// answers carry NUL and invalid UTF-8; the stored answers are clean and
// flagged.
func TestRoundtableAnswerBytesAreCleanedAndRecorded(t *testing.T) {
	w := newWorld(t)
	esc := strings.ReplaceAll(dirty, "\x00", `\u0000`)
	bad := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			fmt.Fprintf(rw, `{"agent_name":"dirty","domain":"secu\u0000rity","observations":[{"finding":"%s","evidence":"[VERIFIED: a.py:1] %s","severity":"warning","confidence":0.5}],"recommendations":[{"action":"%s","priority":"high"}]}`, esc, esc, esc)
		case "/challenge":
			io.WriteString(rw, `{"agent_name":"dirty","challenges":[],"concessions":[]}`)
		case "/vote":
			fmt.Fprintf(rw, `{"agent_name":"dirty","approve":false,"dissent_reason":"%s"}`, esc)
		}
	}))
	t.Cleanup(bad.Close)
	w.register("dirty", bad.URL)
	var start api.StartRoundtableResponse
	if err := w.c.Do(context.Background(), "POST", "/v1/roundtables", api.StartRoundtableRequest{
		Content: "Review the login handler", Participants: []string{"good1", "dirty"}, TimeoutSeconds: 5}, &start); err != nil {
		t.Fatal(err)
	}
	run := w.waitRun(start.ID, 30*time.Second)
	raw, _ := json.Marshal(run)
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u0000`)) {
		t.Fatalf("the stored run carries bad bytes")
	}
	var analysis, vote bool
	for _, a := range run.Answers {
		if a.Agent != "dirty" {
			continue
		}
		switch a.Kind {
		case "analysis":
			var an roundtable.Analysis
			json.Unmarshal(a.Data, &an)
			if len(an.Observations) != 1 {
				t.Fatalf("analysis %s", a.Data)
			}
			o := an.Observations[0]
			clean(t, "the stored finding", o.Finding)
			if !contains(o.Flags, roundtable.FlagNULStripped) || !contains(an.Flags, "invalid_utf8_repaired") || strings.ContainsRune(an.Domain, 0) {
				t.Fatalf("analysis flags %v / finding flags %v lack %s and invalid_utf8_repaired", an.Flags, o.Flags, roundtable.FlagNULStripped)
			}
			analysis = true
		case "vote":
			var v roundtable.Vote
			json.Unmarshal(a.Data, &v)
			clean(t, "the stored dissent", v.DissentReason)
			if !contains(v.Flags, roundtable.FlagNULStripped) || !contains(v.Flags, "invalid_utf8_repaired") {
				t.Fatalf("vote flags %v do not record what was removed", v.Flags)
			}
			vote = true
		}
	}
	if !analysis || !vote {
		t.Fatalf("answers of the dirty agent missing: %s", raw)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
