// Command external benchmarks external-agent callback ingest: the real
// jarvis-service binary (built here) receives replies on
// POST /external/sessions/{id}/messages from concurrent posters while one
// SSE client follows the session. Beside it, in the same run, the baseline:
// the same posters against a loopback HTTP server that reads the body and
// answers 200 (no storage, no fan-out).
//
//	go run ./bench/external [-n 5000] [-c 16] [-size 200]
//
// It prints a Markdown table: accepted POSTs per second, the time from a
// POST to its event reaching the SSE client (p50, p99), and how many of the
// accepted replies are in the transcript after the service is killed with
// SIGKILL and restarted (a 200 means stored).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/api"
	"jarvis/internal/measure"
	"jarvis/internal/proc"
)

func main() {
	n := flag.Int("n", 5000, "callbacks to post")
	conc := flag.Int("c", 16, "concurrent posters")
	size := flag.Int("size", 200, "bytes per reply")
	flag.Parse()
	if err := run(*n, *conc, *size); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func start(bin, dataDir, cfg string) (*proc.Proc, error) {
	return proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--trust-config", "--config", cfg, "--log-level", "warn"},
		[]string{"JARVIS_TOKEN=bench-token"}, true)
}

func run(n, conc, size int) error {
	tmp, err := os.MkdirTemp("", "jarvis-bench-external")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := proc.BuildService(tmp)
	if err != nil {
		return err
	}
	cfg := filepath.Join(tmp, "config.json")
	// The inputUrl is never called: the bench measures the inbound side only.
	os.WriteFile(cfg, []byte(`{"agents":[{"agentId":"bench","displayName":"Bench","type":"external","external":{"inputUrl":"http://127.0.0.1:9/unused"}}]}`), 0o600)
	dataDir := filepath.Join(tmp, "data")
	svc, err := start(bin, dataDir, cfg)
	if err != nil {
		return err
	}
	defer func() { svc.Kill() }()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	c := api.NewClient(svc.URL, "bench-token", hc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sid := "BENCH-1"
	if err := c.Do(ctx, "POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "bench", SessionID: &sid}, nil); err != nil {
		return err
	}
	var info api.ExternalSessionInfo
	if err := c.Do(ctx, "GET", "/v1/external/sessions/"+sid, nil, &info); err != nil {
		return err
	}

	// The SSE client: records when each reply's event arrives.
	arrived := make([]int64, n) // unix nanos
	var got atomic.Int64
	allIn := make(chan struct{})
	warm := make(chan struct{}, 1)
	go c.Stream(ctx, sid, "", func(ev api.StreamEvent) error {
		now := time.Now().UnixNano()
		if ev.Type != api.EventFinal {
			return nil
		}
		var d api.ExternalReplyEvent
		json.Unmarshal(ev.Data, &d)
		if strings.HasPrefix(d.Text, "warmup") {
			select {
			case warm <- struct{}{}:
			default:
			}
			return nil
		}
		i, err := strconv.Atoi(strings.TrimPrefix(d.Text[:12], "bench-"))
		if err != nil || i < 0 || i >= n {
			return nil
		}
		arrived[i] = now
		if got.Add(1) == int64(n) {
			close(allIn)
		}
		return nil
	})
	// Wait until the stream is live: a warmup reply must reach it.
	for tries := 0; ; tries++ {
		if _, err := post(hc, info.CallbackURL, []byte("warmup")); err != nil {
			return err
		}
		select {
		case <-warm:
		case <-time.After(200 * time.Millisecond):
			if tries < 25 {
				continue
			}
			return errors.New("the SSE client never saw the warmup reply")
		}
		break
	}

	pad := strings.Repeat("x", max(size-20, 0))
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf("bench-%06d %s", i, pad))
	}
	sent := make([]int64, n)
	svcTime, svcRTT, err := blast(hc, info.CallbackURL, bodies, conc, sent)
	if err != nil {
		return err
	}
	select {
	case <-allIn:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("only %d of %d events reached the SSE client", got.Load(), n)
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = time.Duration(arrived[i] - sent[i])
	}

	// Durability: kill -9 right after the last 200, restart, count.
	svc.Kill()
	svc, err = start(bin, dataDir, cfg)
	if err != nil {
		return err
	}
	c = api.NewClient(svc.URL, "bench-token", hc)
	var tr api.Transcript
	if err := c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		return err
	}
	stored := 0
	for _, m := range tr.Messages {
		if strings.HasPrefix(m.Text, "bench-") {
			stored++
		}
	}

	// Baseline: the same posters against a loopback server that only reads the body.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}` + "\n"))
	})}
	go base.Serve(ln)
	defer base.Close()
	baseTime, baseRTT, err := blast(hc, "http://"+ln.Addr().String()+"/external/sessions/x/messages?token=t", bodies, conc, make([]int64, n))
	if err != nil {
		return err
	}

	rate := float64(n) / svcTime.Seconds()
	baseRate := float64(n) / baseTime.Seconds()
	p50, p99 := measure.Percentile(lat, 50), measure.Percentile(lat, 99)
	fmt.Printf("External callback ingest: %d replies of %d bytes, %d concurrent posters, one SSE client; GOMAXPROCS %d, %d CPUs, %s/%s.\n\n",
		n, size, conc, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Println("| figure | service | baseline (no-op loopback server) | goal | verdict |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| callbacks accepted per second | %.0f | %.0f | ≥ 2,000/s | %s |\n", rate, baseRate, measure.Verdict(rate >= 2000))
	fmt.Printf("| POST → event at the SSE client, p50 | %s | (POST round trip %s) | | |\n", measure.Ms(p50), measure.Ms(measure.Percentile(baseRTT, 50)))
	fmt.Printf("| POST → event at the SSE client, p99 | %s | (POST round trip %s) | < 20 ms | %s |\n", measure.Ms(p99), measure.Ms(measure.Percentile(baseRTT, 99)), measure.Verdict(p99 < 20*time.Millisecond))
	fmt.Printf("| POST round trip (200 = stored), p50 / p99 | %s / %s | %s / %s | | |\n", measure.Ms(measure.Percentile(svcRTT, 50)), measure.Ms(measure.Percentile(svcRTT, 99)), measure.Ms(measure.Percentile(baseRTT, 50)), measure.Ms(measure.Percentile(baseRTT, 99)))
	fmt.Printf("| accepted replies in the transcript after SIGKILL + restart | %d / %d | | all | %s |\n", stored, n, measure.Verdict(stored == n))
	return nil
}

// blast posts every body with conc workers; sent[i] is when body i was sent.
func blast(hc *http.Client, url string, bodies [][]byte, conc int, sent []int64) (time.Duration, []time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	rtt := make([]time.Duration, len(bodies))
	errc := make(chan error, conc)
	t0 := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return
				}
				s := time.Now()
				sent[i] = s.UnixNano()
				status, err := post(hc, url, bodies[i])
				if err == nil && status != 200 {
					err = fmt.Errorf("POST answered %d", status)
				}
				if err != nil {
					errc <- err
					return
				}
				rtt[i] = time.Since(s)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	select {
	case err := <-errc:
		return 0, nil, err
	default:
	}
	return elapsed, rtt, nil
}

func post(hc *http.Client, url string, body []byte) (int, error) {
	resp, err := hc.Post(url, "text/markdown", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
