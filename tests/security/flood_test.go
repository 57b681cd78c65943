package security

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
	"jarvis/internal/proc"
)

// TestCallbackFloodIsBounded: 100,000 callbacks with a wrong token against
// the real binary grow its database by less than 1 MB (rejections are
// aggregated, not a row each), and the valid callbacks posted during the
// flood are all delivered.
func TestCallbackFloodIsBounded(t *testing.T) {
	dir := t.TempDir()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	defer peer.Close()
	cfgPath := filepath.Join(dir, "config.json")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{"agents":[{"agentId":"ext","displayName":"Ext","type":"external","external":{"inputUrl":%q}}]}`, peer.URL+"/in")), 0o600)
	data := filepath.Join(dir, "data")
	svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", data, "--trust-config", "--config", cfgPath, "--log-level", "warn"},
		[]string{"JARVIS_TOKEN=" + token}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Kill()
	c := api.NewClient(svc.URL, token, nil)
	ctx := context.Background()
	sid := "FLOOD"
	var op api.CreateOperationResponse
	if err := c.Do(ctx, "POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "ext", SessionID: &sid}, &op); err != nil {
		t.Fatal(err)
	}
	var info api.ExternalSessionInfo
	if err := c.Do(ctx, "GET", "/v1/external/sessions/"+sid, nil, &info); err != nil {
		t.Fatal(err)
	}
	bad, _ := url.Parse(info.CallbackURL)
	q := bad.Query()
	q.Set("token", "xcb_wrong-token")
	bad.RawQuery = q.Encode()
	dbSize := func() int64 {
		var n int64
		for _, f := range []string{"jarvis.db", "jarvis.db-wal"} {
			if fi, err := os.Stat(filepath.Join(data, f)); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := dbSize()

	const total, valid = 100_000, 10
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				resp, err := hc.Post(bad.String(), "text/plain", strings.NewReader("spam"))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	delivered := 0
	for i := 0; i < total; i++ {
		work <- i
		if i%(total/valid) == total/valid/2 {
			resp, err := hc.Post(info.CallbackURL, "text/plain", strings.NewReader(fmt.Sprintf("reply %d", delivered)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("a valid callback during the flood: %d", resp.StatusCode)
			}
			delivered++
		}
	}
	close(work)
	wg.Wait()
	if statuses[http.StatusUnauthorized] != total {
		t.Fatalf("answers to the bad callbacks: %v", statuses)
	}
	var tr api.Transcript
	if err := c.Do(ctx, "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != valid {
		t.Fatalf("%d of the %d valid callbacks delivered", len(tr.Messages), valid)
	}
	if err := svc.Stop(); err != nil {
		t.Fatalf("service exit: %v\n%s", err, svc.Stderr())
	}
	grown := dbSize() - before
	t.Logf("database %d -> %d bytes (%+d) after %d rejected callbacks; log %d bytes", before, before+grown, grown, total, len(svc.Stderr()))
	if grown >= 1<<20 {
		t.Fatalf("the database grew by %d bytes", grown)
	}
	if n := strings.Count(svc.Stderr(), "\n"); n > 200 {
		t.Errorf("%d log lines for the flood", n)
	}
}
