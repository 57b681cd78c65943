// Command mcp measures what Jarvis adds to an MCP tool call: a scripted
// model's call of a go-sdk server's echo tool (Streamable HTTP, in-process)
// travels service → tool.request on the session stream → the desktop's
// follower → the gate (an allow rule, schema check, canonical form, an
// audit row) → the MCP client → the server, and its result back through
// POST /v1/tools/result into the model's next request. The same run calls
// the same server directly with a go-sdk client: the difference is what
// Jarvis adds.
//
//	go run -tags sqlite_fts5 ./bench/mcp [-n 300]
//
// The interval through Jarvis runs from the end of the scripted model's
// answer carrying the tool call to the arrival of the request carrying its
// result (measured in the upstream's handler). It prints a Markdown section.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"jarvis/internal/measure"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/api"
	"jarvis/app"
	"jarvis/app/mcp"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

func main() {
	n := flag.Int("n", 300, "calls measured each way")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// timedUpstream wraps the scripted model: it notes when an answer that
// calls a tool ends and when the request with the tool's result arrives.
type timedUpstream struct {
	h        http.Handler
	mu       sync.Mutex
	callDone time.Time
	gaps     []time.Duration
	result   chan struct{}
}

func (u *timedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	last := ""
	if k := len(req.Messages); k > 0 {
		last = req.Messages[k-1].Role
	}
	if last == "tool" {
		u.mu.Lock()
		if !u.callDone.IsZero() {
			u.gaps = append(u.gaps, start.Sub(u.callDone))
			u.callDone = time.Time{}
		}
		u.mu.Unlock()
	}
	u.h.ServeHTTP(w, r)
	if last == "user" {
		u.mu.Lock()
		u.callDone = time.Now()
		u.mu.Unlock()
	} else if last == "tool" {
		u.result <- struct{}{}
	}
}

func run(n int) error {
	ctx := context.Background()
	peer := testpeer.NewMCPPeer()
	ps := httptest.NewServer(peer.Handler())
	defer ps.Close()

	// Direct: a go-sdk client calling the same server.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ps.URL}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	var direct []time.Duration
	for i := 0; i < n+20; i++ {
		t0 := time.Now()
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}}); err != nil {
			return err
		}
		if i >= 20 {
			direct = append(direct, time.Since(t0))
		}
	}

	// Through Jarvis.
	up := &timedUpstream{h: testpeer.NewOpenAI(), result: make(chan struct{}, 1)}
	us := httptest.NewServer(up)
	defer us.Close()
	dir, err := os.MkdirTemp("", "bench-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := config.Parse("bench.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, us.URL+"/v1")))
	if err != nil {
		return err
	}
	const token = "bench-token-0123456789abcdef"
	svc, err := service.New(ctx, service.Options{DataDir: filepath.Join(dir, "svc"), Config: cfg, Token: token})
	if err != nil {
		return err
	}
	defer svc.Close()
	ss := httptest.NewServer(svc.Handler())
	defer ss.Close()
	m, err := mcp.New(mcp.Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	m.Apply(mcp.Config{Servers: []mcp.ServerConfig{{Name: "peer", URL: ps.URL}}})
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o700)
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"mcp__peer__echo","action":"allow"}]}`), 0o600)
	runner, err := app.NewToolRunner(app.ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: policy, MCP: m})
	if err != nil {
		return err
	}
	defer runner.Close()
	c := api.NewClient(ss.URL, token, &http.Client{})
	a, err := app.New(app.Options{Client: c, StreamClient: api.NewClient(ss.URL, token, app.NewStreamHTTPClient()), Emit: func(string, any) {}, Tools: runner, Prompts: runner.Prompts()})
	if err != nil {
		return err
	}
	defer app.Shutdown(a)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go app.SyncMCPCatalog(sctx, c, m, nil, 0)
	for deadline := time.Now().Add(20 * time.Second); ; {
		var cat api.ToolCatalog
		if err := c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat); err == nil && len(cat.Tools) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the catalogue never reached the service")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// measure runs n+20 turns that call tool once each and returns the
	// last n intervals.
	throughJarvis := func(call string) ([]time.Duration, error) {
		up.mu.Lock()
		up.gaps = nil
		up.mu.Unlock()
		var sid string
		for i := 0; i < n+20; i++ {
			if i%50 == 0 { // a fresh session now and then: history stays short
				s, err := a.NewSession("general")
				if err != nil {
					return nil, err
				}
				if _, err := a.OpenSession(s.SessionID); err != nil {
					return nil, err
				}
				sid = s.SessionID
			}
			// The turn runs synchronously here; the desktop (following the
			// session since OpenSession) answers its tool.request.
			if err := c.ChatStream(ctx, sid, call, func(api.StreamEvent) error { return nil }); err != nil {
				return nil, fmt.Errorf("call %d: %w", i, err)
			}
			select {
			case <-up.result: // the handler may still be returning after the turn ended
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("call %d: no result reached the model", i)
			}
		}
		up.mu.Lock()
		defer up.mu.Unlock()
		if len(up.gaps) < n {
			return nil, fmt.Errorf("only %d calls measured", len(up.gaps))
		}
		return append([]time.Duration(nil), up.gaps[20:]...), nil
	}
	through, err := throughJarvis(`[[tool mcp__peer__echo {"text":"ping"}]]`)
	if err != nil {
		return err
	}
	osTool, err := throughJarvis(`[[tool list_dir {}]]`)
	if err != nil {
		return err
	}
	ms := measure.Ms
	added := measure.Percentile(through, 50) - measure.Percentile(direct, 50)
	verdict := "met"
	if added >= 2*time.Millisecond {
		verdict = "missed"
	}
	fmt.Printf("## MCP tool call: what service, desktop and gate add (bench/mcp)\n\n")
	fmt.Printf("%d calls each way, %d CPUs (%s/%s). The server is a go-sdk server over Streamable HTTP in the same process; the\n", len(through), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("baseline calls it with a go-sdk client directly. Through Jarvis: from the end of the scripted model's answer with\n")
	fmt.Printf("the call to the model's next request carrying the result (tool.request over SSE, the gate with an allow rule,\n")
	fmt.Printf("schema check and canonical form, the audit row, the MCP call, POST /v1/tools/result).\n\n")
	fmt.Printf("| figure | p50 | p95 |\n|---|---|---|\n")
	fmt.Printf("| direct go-sdk call (baseline) | %s | %s |\n", ms(measure.Percentile(direct, 50)), ms(measure.Percentile(direct, 95)))
	fmt.Printf("| through service, desktop and gate | %s | %s |\n", ms(measure.Percentile(through, 50)), ms(measure.Percentile(through, 95)))
	fmt.Printf("| **added (p50)** | **%s** | goal < 2 ms: %s |\n", ms(added), verdict)
	fmt.Printf("| for scale: the OS tool list_dir through the same path (no MCP) | %s | %s |\n\n", ms(measure.Percentile(osTool, 50)), ms(measure.Percentile(osTool, 95)))
	fmt.Printf("Command: `go run -tags sqlite_fts5 ./bench/mcp -n %d`\n\n", n)
	return nil
}
