package roundtable

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenDeliberation runs a fixed deliberation against scripted agents with
// a frozen clock, so its Result is byte-for-byte reproducible.
func goldenDeliberation(t *testing.T) Result {
	t.Helper()
	sec, _ := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			_, _ = w.Write([]byte(`{"agent_name":"security_analyst","domain":"application security","observations":[
				{"finding":"SQL injection vulnerability in user search endpoint","evidence":"[VERIFIED: auth_module.py:line_42] Raw string interpolation in SQL query","severity":"critical","confidence":0.95},
				{"finding":"Missing rate limiting on login endpoint","evidence":"[INDICATED: routes/auth.py] No rate limiter middleware applied","severity":"warning","confidence":0.8}],
				"recommendations":[{"action":"Use parameterized queries for all SQL operations","rationale":"Prevents SQL injection (OWASP A03:2021)","priority":"critical"},
				{"action":"Add rate limiting to the login endpoint","rationale":"Slows credential stuffing","priority":"warning"}],"confidence":0.85}`))
		case "/challenge":
			_, _ = w.Write([]byte(`{"agent_name":"security_analyst","challenges":[{"target_agent":"code_reviewer","finding_challenged":"Authentication logic is well-structured",
				"counter_evidence":"Structure is clean but the SQL query on line 42 uses string interpolation"}],"concessions":[]}`))
		case "/vote":
			_, _ = w.Write([]byte(`{"agent_name":"security_analyst","approve":true,"conditions":["SQL injection fix must use parameterized queries, not escaping"],"dissent_reason":null}`))
		}
	})
	rev, _ := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			_, _ = w.Write([]byte(`{"agent_name":"code_reviewer","domain":"code quality","observations":[
				{"finding":"Authentication logic is well-structured\n# Injected heading ![x](https://evil.example/p.png)","evidence":"Clean separation of concerns <img src=x>","severity":"info","confidence":0.7},
				{"finding":"Rate limiting might be missing on login","evidence":"[POSSIBLE]","severity":"info","confidence":0.5}]}`))
		case "/challenge":
			_, _ = w.Write([]byte(`{"agent_name":"code_reviewer","challenges":[],"concessions":[{"target_agent":"security_analyst",
				"finding_accepted":"Missing rate limiting on login endpoint","reason":"Matches my own observation"}]}`))
		case "/vote":
			_, _ = w.Write([]byte(`{"agent_name":"code_reviewer","approve":false,"conditions":[],"dissent_reason":"Rate limiting should ship with the fix, not later"}`))
		}
	})
	broken, _ := newScripted(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		http.Error(w, "upstream model unavailable", http.StatusServiceUnavailable)
	})
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	eng := newEngine(t, Options{Now: func() time.Time { return clock }})
	res, err := eng.Run(ctxT(t), Task{ID: "a1b2c3d4e5f6", Content: "Review the authentication module for security vulnerabilities"}, []Agent{
		{Name: "security_analyst", BaseURL: sec.URL},
		{Name: "code_reviewer", BaseURL: rev.URL},
		{Name: "flaky", BaseURL: broken.URL},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run with -update after checking):\n--- got\n%s", name, got)
	}
}

func TestRenderMarkdownGolden(t *testing.T) {
	res := goldenDeliberation(t)
	golden(t, "deliberation.golden.md", []byte(RenderMarkdown(res)))
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "deliberation.golden.json", append(b, '\n'))
}

func TestRenderMarkdownEscapesAgentText(t *testing.T) {
	md := RenderMarkdown(goldenDeliberation(t))
	for _, bad := range []string{"\n# Injected", "![x](", "[x](", "<img"} {
		if strings.Contains(md, bad) {
			t.Errorf("agent text injected Markdown/HTML %q:\n%s", bad, md)
		}
	}
	for _, want := range []string{"## Round table:", "### Recommended direction", "### Key findings", "### Challenges and concessions",
		"### Minority views", "\\# Injected heading !\\[x\\](https://evil.example/p.png)", "### Trade-offs", "### Votes", "**dissents**: Rate limiting should ship", "### Excluded agents", "| analyze | flaky | http_error | HTTP 503"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
