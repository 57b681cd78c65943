package load

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

// TestParkedConnectionKeepsTheMessage is the load test's old failure, made
// deterministic, against the real binary: a connection an HTTP client
// dialed and parked unused for longer than the service's 10 s header
// timeout, then a POST /v1/chat sent on it. The service used to close such
// a connection silently at second 10 (the header timeout ran from accept),
// and the POST got EOF; now the wait for a connection's first request is an
// idle wait (2 min) and the message is answered.
func TestParkedConnectionKeepsTheMessage(t *testing.T) {
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, up.URL+"/v1")), 0o600); err != nil {
		t.Fatal(err)
	}
	const tok = "parked-token-0123456789"
	svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--trust-config", "--config", cfg, "--log-level", "error"}, []string{"JARVIS_TOKEN=" + tok}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Kill()
	s, err := api.NewClient(svc.URL, tok, nil).CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "parked"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(svc.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(11 * time.Second) // parked past the 10 s header timeout, as in a client's pool
	body, _ := json.Marshal(api.ChatRequest{GeneralSessionID: s.GeneralSessionID, Mode: "general", Message: api.Message{Parts: []api.MessagePart{{Type: "text", Text: "still there?"}}}})
	req := fmt.Sprintf("POST /v1/chat HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, tok, len(body), body)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatalf("writing the POST on the parked connection: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the message sent on a parked connection got no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "You said: still there?") {
		t.Fatalf("answer %d %s", resp.StatusCode, b)
	}
}
