package app

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
)

// newAuditApp returns an App on an audit log with four rows over three days.
func newAuditApp(t *testing.T, save func(string) (string, error)) (*App, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	lg, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	day := func(d int) time.Time { return time.Date(2025, 3, d, 12, 0, 0, 0, time.Local) }
	rows := []audit.Entry{
		{Time: day(1), SessionID: "s1", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`), Class: "safe", Decision: audit.Allowed, DecidedBy: audit.ByPolicy, Result: "hello", DurationMS: 3},
		{Time: day(2), SessionID: "s1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"b.txt","content":"x"}`), Class: "risky", Decision: audit.Allowed, DecidedBy: audit.ByUser, Result: "wrote 1 byte", DurationMS: 7},
		{Time: day(2), SessionID: "s2", Tool: "read_file", Arguments: json.RawMessage(`{"path":"../etc/passwd"}`), Class: "forbidden", Decision: audit.Denied, DecidedBy: audit.ByPolicy, Error: "outside the workspace"},
		{Time: day(3), SessionID: "s2", Tool: "run_command", Arguments: json.RawMessage(`{"command":"ls"}`), Class: "risky", Decision: audit.Denied, DecidedBy: audit.ByTimeout},
	}
	for _, e := range rows {
		if _, err := lg.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	a, err := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}, Audit: lg, DataDir: dir, SaveFile: save})
	if err != nil {
		t.Fatal(err)
	}
	return a, path
}

func toolNames(es []audit.Entry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Tool)
	}
	return strings.Join(s, ",")
}

func TestAuditListFilters(t *testing.T) {
	a, _ := newAuditApp(t, nil)
	cases := []struct {
		name string
		f    AuditFilter
		want string
	}{
		{"all, newest first", AuditFilter{}, "run_command,read_file,write_file,read_file"},
		{"tool", AuditFilter{Tool: "read_file"}, "read_file,read_file"},
		{"decision", AuditFilter{Decision: audit.Denied}, "run_command,read_file"},
		{"decided by", AuditFilter{DecidedBy: audit.ByUser}, "write_file"},
		{"session", AuditFilter{SessionID: "s2"}, "run_command,read_file"},
		{"one day, both bounds inclusive", AuditFilter{Since: "2025-03-02", Until: "2025-03-02"}, "read_file,write_file"},
		{"from a day", AuditFilter{Since: "2025-03-03"}, "run_command"},
		{"combined", AuditFilter{Tool: "read_file", Decision: audit.Allowed}, "read_file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.AuditList(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(p.Entries); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	p, err := a.AuditList(AuditFilter{Limit: 2})
	if err != nil || len(p.Entries) != 2 || !p.More || p.Entries[0].ID != 4 {
		t.Fatalf("limit: %+v %v", p, err)
	}
	e := p.Entries[0]
	if e.Hash == "" || e.PrevHash == "" || string(e.Arguments) != `{"command":"ls"}` {
		t.Fatalf("detail fields missing: %+v", e)
	}
	if _, err := a.AuditList(AuditFilter{Since: "yesterday"}); err == nil || !strings.Contains(err.Error(), "not a date") {
		t.Fatalf("bad date: %v", err)
	}
	if _, err := a.AuditList(AuditFilter{Since: "2025-03-03", Until: "2025-03-01"}); err == nil {
		t.Fatal("an end before the start was accepted")
	}
}

func TestAuditExportJSONL(t *testing.T) {
	t.Run("to the data dir", func(t *testing.T) {
		a, _ := newAuditApp(t, nil)
		x, err := a.AuditExportJSONL(AuditFilter{Tool: "read_file"})
		if err != nil {
			t.Fatal(err)
		}
		if x.Rows != 2 || filepath.Dir(x.Path) != a.dataDir || !strings.HasPrefix(filepath.Base(x.Path), "audit-export-") || !strings.HasSuffix(x.Path, ".jsonl") {
			t.Fatalf("export %+v", x)
		}
		checkJSONL(t, x.Path, []string{"read_file", "read_file"})
		if fi, _ := os.Stat(x.Path); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", fi.Mode())
		}
	})
	t.Run("through the save dialog", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "chosen.jsonl")
		var offered string
		a, _ := newAuditApp(t, func(name string) (string, error) { offered = name; return target, nil })
		x, err := a.AuditExportJSONL(AuditFilter{})
		if err != nil || x.Path != target || x.Rows != 4 {
			t.Fatalf("export %+v %v", x, err)
		}
		if !strings.HasPrefix(offered, "audit-export-") {
			t.Fatalf("default name %q", offered)
		}
		checkJSONL(t, target, []string{"read_file", "write_file", "read_file", "run_command"})
	})
	t.Run("dialog cancelled", func(t *testing.T) {
		a, _ := newAuditApp(t, func(string) (string, error) { return "", nil })
		x, err := a.AuditExportJSONL(AuditFilter{})
		if err != nil || !x.Cancelled || x.Path != "" {
			t.Fatalf("export %+v %v", x, err)
		}
	})
}

func checkJSONL(t *testing.T, path string, want []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.Hash == "" {
			t.Fatalf("no hash in %q", sc.Text())
		}
		got = append(got, e.Tool)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("exported %v, want %v", got, want)
	}
}

func TestAuditVerifyFindsTamperedRow(t *testing.T) {
	a, path := newAuditApp(t, nil)
	rep, err := a.AuditVerify()
	if err != nil || !rep.OK || rep.Rows != 4 {
		t.Fatalf("fresh log: %+v %v", rep, err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET result = 'forged' WHERE id = 2`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	rep, err = a.AuditVerify()
	if err != nil || rep.OK || rep.FirstBadID != 2 || len(rep.Warnings) == 0 {
		t.Fatalf("tampered log: %+v %v", rep, err)
	}
}

func TestAuditWithoutLog(t *testing.T) {
	a, _ := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}})
	if _, err := a.AuditList(AuditFilter{}); err == nil {
		t.Fatal("no error without an audit log")
	}
}

// panelService answers the setup, test and round-table routes and records
// the bodies it got.
func panelService(t *testing.T, bodies *[]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*bodies = append(*bodies, r.Method+" "+r.URL.Path+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /v1/providers":
			w.Write([]byte(`{"configured":false,"problem":"no provider","defaultProvider":"openai","providers":{},"openaiKeyStored":false,
			  "discovered":[{"name":"Ollama","baseUrl":"http://127.0.0.1:11434/v1","models":["llama3.2","qwen2.5"]}]}`))
		case "PUT /v1/providers":
			var req api.SetProviderRequest
			json.Unmarshal(b, &req)
			if req.Provider == "openai" {
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"error":{"code":"keyring_unavailable","message":"could not store the key in the OS keyring; set JARVIS_SECRET_OPENAI in the service's environment instead","details":{}}}`))
				return
			}
			w.Write([]byte(`{"configured":true,"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":"` + req.BaseURL + `","model":"` + req.Model + `"}},"discovered":[]}`))
		case "POST /v1/agents/px/test":
			w.Write([]byte(`{"status":200,"latencyMs":42,"rawResponse":"{\"reply\":\"hi\"}","parsed":true,"output":"hi","thoughts":["thinking"]}`))
		case "POST /v1/agents/general/test":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":"not_a_proxy_agent","message":"agent \"general\" is of type \"chat\"; only proxy agents have a Test action","details":{}}}`))
		case "GET /v1/roundtables/rt_1":
			w.Write([]byte(`{"id":"rt_1","general_session_id":"g","source":"api","status":"completed","outcome":"approved","task":{"id":"rt_1","content":"x"},"participants":["a","b"],"created_at":"t","answers":[],"result":{"recommended_direction":"Do it"}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"code":"not_found","message":"no route","details":{}}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProviderSetup(t *testing.T) {
	var bodies []string
	srv := panelService(t, &bodies)
	var logged strings.Builder
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}, Logger: newTextLogger(&logged)})
	p, err := a.Providers()
	if err != nil || p.Configured || len(p.Discovered) != 1 || len(p.Discovered[0].Models) != 2 {
		t.Fatalf("providers %+v %v", p, err)
	}
	// The keyring refusal reaches the form as the service's explanation.
	_, err = a.SetProvider(api.SetProviderRequest{Provider: "openai", APIKey: " sk-secret-123 "})
	if err == nil || !strings.Contains(err.Error(), "JARVIS_SECRET_OPENAI") {
		t.Fatalf("keyring error %v", err)
	}
	if strings.Contains(logged.String(), "sk-secret") {
		t.Fatalf("the key was logged: %s", logged.String())
	}
	if !strings.Contains(bodies[len(bodies)-1], `"apiKey":"sk-secret-123"`) {
		t.Fatalf("body %s", bodies[len(bodies)-1])
	}
	p, err = a.SetProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: " http://127.0.0.1:11434/v1 ", Model: "llama3.2"})
	if err != nil || !p.Configured || p.Providers["openai-compatible"].Model != "llama3.2" {
		t.Fatalf("set %+v %v", p, err)
	}
	if strings.Contains(bodies[len(bodies)-1], "apiKey") {
		t.Fatalf("an empty key was sent: %s", bodies[len(bodies)-1])
	}
	for _, bad := range []api.SetProviderRequest{{Provider: "openai"}, {Provider: "openai-compatible", BaseURL: "http://x"}, {Provider: "other"}} {
		n := len(bodies)
		if _, err := a.SetProvider(bad); err == nil || len(bodies) != n {
			t.Fatalf("%+v: err %v, sent %d", bad, err, len(bodies)-n)
		}
	}
}

func TestTestAgentAndRoundtable(t *testing.T) {
	var bodies []string
	srv := panelService(t, &bodies)
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	rep, err := a.TestAgent("px", "ping")
	if err != nil || rep.Status != 200 || !rep.Parsed || rep.Output != "hi" || rep.LatencyMs != 42 || len(rep.Thoughts) != 1 {
		t.Fatalf("report %+v %v", rep, err)
	}
	if !strings.Contains(bodies[len(bodies)-1], `"text":"ping"`) {
		t.Fatalf("body %s", bodies[len(bodies)-1])
	}
	if _, err := a.TestAgent("general", ""); err == nil || !strings.Contains(err.Error(), "only proxy agents") {
		t.Fatalf("non-proxy: %v", err)
	}
	run, err := a.Roundtable("rt_1")
	if err != nil || run.Outcome != "approved" || !strings.Contains(string(run.Result), "Do it") {
		t.Fatalf("run %+v %v", run, err)
	}
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
