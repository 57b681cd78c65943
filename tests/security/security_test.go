package security

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/listener"
)

const token = "suite-token-7c1d0e"

type target struct {
	svc  *service.Service
	srv  *httptest.Server
	port string
}

func newTarget(t *testing.T) *target {
	t.Helper()
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	cfg, err := config.Parse("c.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, up.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.Close(); svc.Close() })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	return &target{svc: svc, srv: srv, port: port}
}

// routes returns every route of the table as method and a concrete path.
func (tg *target) routes() [][2]string {
	var out [][2]string
	vars := regexp.MustCompile(`\{[^}]+\}`)
	for _, p := range tg.svc.Routes() {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "GET", p
		}
		out = append(out, [2]string{method, vars.ReplaceAllString(path, "x")})
	}
	return out
}

func stateChanging(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

func (tg *target) do(t *testing.T, method, path, host string, hdr map[string]string, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, tg.srv.URL+path, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode >= 400 && !strings.Contains(string(b), `"error"`) {
		t.Errorf("%s %s: %d without the error envelope: %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1 can
// reach the port, but its requests carry its own Host.
func TestDNSRebindingHostsAreRefusedOnEveryRoute(t *testing.T) {
	tg := newTarget(t)
	p := tg.port
	bad := []string{"evil.example:" + p, ":" + p, "x.localhost:" + p, "127.0.0.1.nip.io:" + p, "192.168.1.10:" + p,
		"10.0.0.1:" + p, "0.0.0.0:" + p, "127.0.0.2:" + p, "127.0.0.1", "localhost", "127.0.0.1:1", "[::ffff:127.0.0.1]:" + p, "localhost.:" + p}
	for _, r := range tg.routes() {
		for _, h := range bad {
			hdr := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
			if got := tg.do(t, r[0], r[1], h, hdr, "{}"); got != http.StatusForbidden {
				t.Errorf("%s %s with Host %q: %d, want 403", r[0], r[1], h, got)
			}
		}
	}
	for _, h := range []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p} {
		if got := tg.do(t, "GET", "/health", h, nil, ""); got != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", h, got)
		}
	}
}

// Cross-origin: a text/plain POST needs no CORS preflight, so a web page can
// send it; the Origin / Sec-Fetch-Site headers give it away.
func TestCrossOriginRequestsAreRefusedOnEveryStateChangingRoute(t *testing.T) {
	tg := newTarget(t)
	n := 0
	for _, r := range tg.routes() {
		if !stateChanging(r[0]) {
			continue
		}
		n++
		for _, hdr := range []map[string]string{
			{"Origin": "https://evil.example"},
			{"Origin": "null"},
			{"Origin": "http://127.0.0.1:1"},
			{"Origin": "http://localhost.evil.example:" + tg.port},
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site"},
		} {
			hdr["Content-Type"] = "text/plain"
			hdr["Authorization"] = "Bearer " + token // even with the token
			if got := tg.do(t, r[0], r[1], "", hdr, `{"jarvis_session_id":"x"}`); got != http.StatusForbidden {
				t.Errorf("%s %s with %v: %d, want 403", r[0], r[1], hdr, got)
			}
		}
	}
	if n < 8 {
		t.Fatalf("only %d state-changing routes found: the route table is not being enumerated", n)
	}
}

func TestTokenIsRequiredOnEveryAPIRoute(t *testing.T) {
	tg := newTarget(t)
	for _, r := range tg.routes() {
		if !strings.HasPrefix(r[1], "/v1/") && !strings.HasPrefix(r[1], "/api/") {
			continue
		}
		for name, auth := range map[string]string{"missing": "", "wrong": "Bearer nope", "another install's": "Bearer 0123456789abcdef0123456789abcdef", "not bearer": "Basic " + token, "empty bearer": "Bearer "} {
			hdr := map[string]string{"Content-Type": "application/json"}
			if auth != "" {
				hdr["Authorization"] = auth
			}
			if got := tg.do(t, r[0], r[1], "", hdr, "{}"); got != http.StatusUnauthorized {
				t.Errorf("%s %s with %s token: %d, want 401", r[0], r[1], name, got)
			}
		}
	}
}

func TestOversizedBodiesAre413OnEveryRouteWithABody(t *testing.T) {
	tg := newTarget(t)
	big := `{"x":"` + strings.Repeat("a", 2<<20) + `"}`
	// POST /v1/chat takes images, and POST /v1/tools/result a tool's images
	// and audio: their cap is a message of attachments (api.MaxMessageBytes)
	// once base64-encoded, plus room for the text.
	chatBig := `{"x":"` + strings.Repeat("a", api.MaxMessageBytes/3*4+2<<20) + `"}`
	for _, r := range tg.routes() {
		if !stateChanging(r[0]) || strings.HasPrefix(r[1], "/external/") || strings.HasPrefix(r[1], "/proxy/") {
			continue // the callback routes have their own caps, checked by their tests
		}
		hdr := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
		body := big
		if r[1] == "/v1/chat" || r[1] == "/v1/tools/result" {
			body = chatBig
		}
		got := tg.do(t, r[0], r[1], "", hdr, body)
		if got != http.StatusRequestEntityTooLarge && got != http.StatusNotFound {
			t.Errorf("%s %s with a %d-byte body: %d, want 413", r[0], r[1], len(body), got)
		}
	}
}

// Slowloris: hundreds of connections dribbling their headers must not starve
// /health.
func TestSlowClientsCannotStarveHealth(t *testing.T) {
	tg := newTarget(t)
	ln := strings.TrimPrefix(tg.srv.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 300; i++ {
		c, err := net.Dial("tcp", ln)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nX-Slow: ", tg.port)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte a second on each
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				for _, c := range conns {
					c.Write([]byte("a"))
				}
			}
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 20; i++ {
		resp, err := client.Get(tg.srv.URL + "/health")
		if err != nil {
			t.Fatalf("health starved with 300 slow clients: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("health %d", resp.StatusCode)
		}
	}
}

// The real binary: loopback-only socket, 0600 token, no secret in its logs.
func TestBinaryListensOnLoopbackOnlyAndNeverLogsSecrets(t *testing.T) {
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	peer := testpeer.NewOpenAI()
	up := httptest.NewServer(peer)
	defer up.Close()
	cfgPath := filepath.Join(dir, "config.json")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m","apiKeyRef":"suite"}}}`, up.URL+"/v1")), 0o600)
	apiKey := "sk-suite-SECRET-4b9f2"
	svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--trust-config", "--config", cfgPath, "--log-level", "debug"},
		[]string{"JARVIS_TOKEN=", "JARVIS_SECRET_SUITE=" + apiKey}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Kill()
	cmd, url := svc.Cmd, svc.URL
	tokPath := filepath.Join(dir, "data", "token")
	st, err := os.Stat(tokPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", err, st)
	}
	tokBytes, _ := os.ReadFile(tokPath)
	tok := strings.TrimSpace(string(tokBytes))

	// The socket is bound to 127.0.0.1 only.
	if ss, err := exec.LookPath("ss"); err == nil {
		out, _ := exec.Command(ss, "-Hltnp").CombinedOutput()
		port := url[strings.LastIndex(url, ":")+1:]
		var mine []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, fmt.Sprintf("pid=%d,", cmd.Process.Pid)) {
				mine = append(mine, l)
			}
		}
		if len(mine) != 1 || !strings.Contains(mine[0], "127.0.0.1:"+port) {
			t.Fatalf("listening sockets of the service:\n%s", strings.Join(mine, "\n"))
		}
	} else {
		t.Log("ss not installed; socket check skipped (scripts/setup.sh installs iproute2)")
	}

	// A full session with the API key in use, a refused request, and a tool call.
	c := api.NewClient(url, tok, nil)
	ctx := context.Background()
	s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "sec"})
	if err != nil {
		t.Fatal(err)
	}
	c.ChatStream(ctx, s.GeneralSessionID, `[[tool notify {"title":"t"}]]`, func(ev api.StreamEvent) error {
		if ev.Type == api.EventToolRequest {
			var tc api.ToolCall
			jsonUnmarshal(ev.Data, &tc)
			return c.PostToolResult(ctx, s.GeneralSessionID, api.ToolResult{ID: tc.ID, OK: true, Result: "ok"})
		}
		return nil
	})
	api.NewClient(url, "wrong-"+tok, nil).CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "x"})
	// The upstream received the key: it was really in use during the run.
	auths := peer.Authorizations()
	if len(auths) == 0 || auths[0] != "Bearer "+apiKey {
		t.Fatalf("upstream saw Authorization %q", auths)
	}
	svc.Stop()
	logs := svc.Stderr()
	for name, secret := range map[string]string{"token": tok, "API key": apiKey} {
		if strings.Contains(logs, secret) || strings.Contains(logs, secret[:12]) {
			t.Errorf("the %s appears in the service's logs", name)
		}
	}
	if len(logs) == 0 {
		t.Fatal("no logs captured: the check above proves nothing")
	}
}

func TestNonLoopbackAddressIsRefused(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.168.1.10:0", "example.com:0"} {
		if _, err := listener.Listen(addr, false); err == nil {
			t.Errorf("Listen(%q) succeeded", addr)
		}
	}
	ln, err := listener.Listen("localhost:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Fatalf("localhost bound %s", ln.Addr())
	}
}
