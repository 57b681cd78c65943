package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"time"

	"jarvis/api"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/proxy"
	"jarvis/service/proxy/proxytest"
)

// The full-service measurement: a proxy-agent turn through the real
// service (POST /v1/chat, stream=false, over loopback HTTP with the bearer
// token, a real SQLite file in a temp dir) against a plain POST of the same
// Agent Protocol body to the same scripted agent, sequential and
// interleaved in one run. The difference at the median is what the service
// adds to a proxy call: its HTTP edge, storing the turn and its messages
// and events, running the turn, and the proxy client itself.

const benchToken = "bench-token-0123456789"

type serviceResults struct {
	n               int
	direct, service []time.Duration // sorted
}

func measureService(ctx context.Context, n, warmup int) (serviceResults, error) {
	agent := &proxytest.Agent{}
	asrv := httptest.NewServer(agent.Handler())
	defer asrv.Close()

	dir, err := os.MkdirTemp("", "proxybench")
	if err != nil {
		return serviceResults{}, err
	}
	defer os.RemoveAll(dir)
	cfg, err := config.Parse("bench.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"general"},
		{"agentId":"bench-proxy","type":"proxy","proxy":{"url":%q,"routeToUser":true,"timeoutSeconds":10}}]}`, asrv.URL+"/sync")))
	if err != nil {
		return serviceResults{}, err
	}
	svc, err := service.New(ctx, service.Options{DataDir: dir, Config: cfg, Token: benchToken})
	if err != nil {
		return serviceResults{}, err
	}
	defer svc.Close()
	ssrv := httptest.NewServer(svc.Handler())
	defer ssrv.Close()
	c := api.NewClient(ssrv.URL, benchToken, nil)
	sess, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "bench", AgentID: "bench-proxy"})
	if err != nil {
		return serviceResults{}, err
	}

	const text = "How long does this take?"
	want := []byte(proxytest.Answer(text))
	agentBody, err := proxy.RenderBody(proxy.Definition{URL: asrv.URL + "/sync"}, proxy.Input{SessionID: sess.GeneralSessionID, UserID: "bench-user", Text: text})
	if err != nil {
		return serviceResults{}, err
	}
	chatBody, _ := json.Marshal(api.ChatRequest{GeneralSessionID: sess.GeneralSessionID, Stream: false,
		Message: api.Message{Parts: []api.MessagePart{{Type: "text", Text: text}}}})
	hc := &http.Client{}
	post := func(url string, body []byte, auth bool) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if auth {
			req.Header.Set("Authorization", "Bearer "+benchToken)
		}
		res, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK || !bytes.Contains(b, want) {
			return fmt.Errorf("%s answered %d: %s", url, res.StatusCode, b)
		}
		return nil
	}
	direct := func() error { return post(asrv.URL+"/sync", agentBody, false) }
	viaService := func() error { return post(ssrv.URL+"/v1/chat", chatBody, true) }

	r := serviceResults{n: n, direct: make([]time.Duration, 0, n), service: make([]time.Duration, 0, n)}
	for i := range warmup + n {
		d1, err := timed(direct)
		if err != nil {
			return r, err
		}
		d2, err := timed(viaService)
		if err != nil {
			return r, err
		}
		if i >= warmup {
			r.direct = append(r.direct, d1)
			r.service = append(r.service, d2)
		}
	}
	slices.Sort(r.direct)
	slices.Sort(r.service)
	return r, nil
}

func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func (r serviceResults) print(w io.Writer) {
	fmt.Fprintf(w, "Proxy agent through the service: %d sequential turns (POST /v1/chat, stream=false) vs. POST to the agent directly, %s, GOMAXPROCS=%d, %s/%s\n\n",
		r.n, runtime.Version(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	overheadTable(w, "agent directly (plain POST)", r.direct, "service: POST /v1/chat → proxy agent", r.service, "added by the service")
}
