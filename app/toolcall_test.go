package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
)

// fakeService streams one tool.request per session and records the tool
// results the app posts back.
type fakeService struct {
	calls   map[string]string // session → tool.request data
	mu      sync.Mutex
	results map[string]api.ToolResultRequest
	got     chan string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/stream":
		sid := r.URL.Query().Get("general_session_id")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: 1\nevent: tool.request\ndata: %s\n\n", f.calls[sid])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/messages"):
		fmt.Fprint(w, `{"messages":[],"lastEventId":0}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tools/result":
		var req api.ToolResultRequest
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.results[req.GeneralSessionID] = req
		f.mu.Unlock()
		fmt.Fprint(w, `{"accepted":true}`)
		f.got <- req.GeneralSessionID
	default:
		http.NotFound(w, r)
	}
}

type emitted struct {
	mu     sync.Mutex
	events []string
	on     func(name string, data any)
}

func (e *emitted) emit(name string, data any) {
	e.mu.Lock()
	e.events = append(e.events, name)
	on := e.on
	e.mu.Unlock()
	if on != nil {
		on(name, data)
	}
}

func TestToolCallLifecycle(t *testing.T) {
	cases := []struct {
		name      string
		call      string
		answer    func(p gate.Prompt) (choice, edited string) // nil: never answer
		wantOK    bool
		wantErr   string
		decision  string
		decidedBy string
		prompted  bool
		file      string // expected workspace file content, "" for none
	}{
		{name: "risky allowed once", call: `{"id":"c1","name":"write_file","arguments":{"path":"a.txt","content":"hi"},"risk":"risky"}`,
			answer: func(gate.Prompt) (string, string) { return "once", "" }, wantOK: true, decision: audit.Allowed, decidedBy: audit.ByUser, prompted: true, file: "hi"},
		{name: "risky with edited arguments", call: `{"id":"c2","name":"write_file","arguments":{"path":"b.txt","content":"x"},"risk":"risky"}`,
			answer: func(gate.Prompt) (string, string) { return "once", `{"path":"b.txt","content":"edited"}` }, wantOK: true, decision: audit.Allowed, decidedBy: audit.ByUser, prompted: true, file: "edited"},
		{name: "edit to a forbidden path is denied", call: `{"id":"c3","name":"write_file","arguments":{"path":"c.txt","content":"x"},"risk":"risky"}`,
			answer: func(gate.Prompt) (string, string) { return "once", `{"path":"../c.txt","content":"x"}` }, wantErr: "denied", decision: audit.Denied, decidedBy: audit.ByPolicy, prompted: true},
		{name: "risky denied by the user", call: `{"id":"c4","name":"write_file","arguments":{"path":"d.txt","content":"x"},"risk":"risky"}`,
			answer: func(gate.Prompt) (string, string) { return "deny", "" }, wantErr: "denied", decision: audit.Denied, decidedBy: audit.ByUser, prompted: true},
		{name: "unanswered prompt fails closed", call: `{"id":"c5","name":"write_file","arguments":{"path":"e.txt","content":"x"},"risk":"risky"}`,
			wantErr: "denied", decision: audit.Denied, decidedBy: audit.ByTimeout, prompted: true},
		{name: "forbidden without a prompt", call: `{"id":"c6","name":"read_file","arguments":{"path":"../../etc/passwd"},"risk":"safe"}`,
			wantErr: "denied", decision: audit.Denied, decidedBy: audit.ByPolicy},
		{name: "safe runs without a prompt", call: `{"id":"c7","name":"list_dir","arguments":{},"risk":"safe"}`,
			wantOK: true, decision: audit.Allowed, decidedBy: audit.ByPolicy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			os.Mkdir(ws, 0o700)
			fs := &fakeService{calls: map[string]string{"g_1": tc.call}, results: map[string]api.ToolResultRequest{}, got: make(chan string, 1)}
			srv := httptest.NewServer(fs)
			defer srv.Close()
			runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"),
				Prompter: gate.PrompterOptions{Timeout: 300 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			defer runner.Close()
			em := &emitted{}
			c := api.NewClient(srv.URL, "tok", nil)
			a, err := New(Options{Client: c, StreamClient: api.NewClient(srv.URL, "tok", NewStreamHTTPClient()), Emit: em.emit, Tools: runner, Prompts: runner.Prompts()})
			if err != nil {
				t.Fatal(err)
			}
			var prompted sync.Once
			sawPrompt := false
			em.on = func(name string, data any) {
				ps, ok := data.([]gate.Prompt)
				if name != "tool:prompts" || !ok || len(ps) == 0 {
					return
				}
				prompted.Do(func() {
					sawPrompt = true
					if tc.answer != nil {
						choice, edited := tc.answer(ps[0])
						go func() {
							if err := a.ResolvePrompt(ps[0].ID, choice, edited); err != nil {
								t.Errorf("ResolvePrompt: %v", err)
							}
						}()
					}
				})
			}
			Start(a)
			defer Shutdown(a)
			if _, err := a.OpenSession("g_1"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-fs.got:
			case <-time.After(5 * time.Second):
				t.Fatal("no tool result was posted")
			}
			fs.mu.Lock()
			res := fs.results["g_1"].ToolResult
			fs.mu.Unlock()
			if res.OK != tc.wantOK {
				t.Fatalf("posted ok=%v (%+v), want %v", res.OK, res, tc.wantOK)
			}
			if tc.wantErr != "" && (res.Error == nil || !strings.Contains(*res.Error, tc.wantErr)) {
				t.Fatalf("posted error %v, want it to contain %q", res.Error, tc.wantErr)
			}
			if sawPrompt != tc.prompted {
				t.Fatalf("prompted=%v, want %v", sawPrompt, tc.prompted)
			}
			es, err := runner.Audit().List(context.Background(), audit.Filter{})
			if err != nil || len(es) != 1 {
				t.Fatalf("audit entries %v (err %v), want 1", es, err)
			}
			if es[0].Decision != tc.decision || es[0].DecidedBy != tc.decidedBy {
				t.Fatalf("audit %s by %s, want %s by %s", es[0].Decision, es[0].DecidedBy, tc.decision, tc.decidedBy)
			}
			if tc.file != "" {
				b, _ := os.ReadFile(filepath.Join(ws, mustPath(tc.call)))
				if string(b) != tc.file {
					t.Fatalf("workspace file = %q, want %q", b, tc.file)
				}
			}
		})
	}
}

func mustPath(call string) string {
	var c struct {
		Arguments struct {
			Path string `json:"path"`
		} `json:"arguments"`
	}
	json.Unmarshal([]byte(call), &c)
	return c.Arguments.Path
}
