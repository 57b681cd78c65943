package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"jarvis/internal/measure"
	"jarvis/internal/proc"
)

// apiFigures are what the bench measures through the real service on the
// filled data dir.
type apiFigures struct {
	Listen, ListPage, Transcript, SearchCommon, SearchRare, FirstTurn, WarmTurn time.Duration
	TranscriptLen                                                               int
}

// measureAPI starts jarvis-service on dataDir (the scripted upstream as its
// model) `restarts` times and times, through HTTP: the start to the
// listening line, a page of the session list, the transcript of long,
// searches, and the first turn after each start (in the conversation other)
// against warm turns.
func measureAPI(tmp, dataDir, long, other string, restarts, reps int) (apiFigures, error) {
	var f apiFigures
	bin, err := proc.BuildService(tmp)
	if err != nil {
		return f, err
	}
	peerBin, err := proc.Build(tmp, "jarvis/internal/testpeer/cmd/openai-peer")
	if err != nil {
		return f, err
	}
	peer, err := proc.Start(peerBin, []string{"-model", "bench"}, nil, false)
	if err != nil {
		return f, err
	}
	defer peer.Kill()
	cfg := filepath.Join(tmp, "config.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"bench"}}}`, peer.URL+"/v1")), 0o600); err != nil {
		return f, err
	}
	// --trust-config: the bench manages this file; a config Jarvis did not
	// write is otherwise not applied until the user approves it.
	var listen, first, warm, list, transcript, common, rare []time.Duration
	hc := &http.Client{}
	for r := range restarts {
		t0 := time.Now()
		svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--trust-config", "--config", cfg, "--log-level", "warn"},
			[]string{"JARVIS_TOKEN=bench-token"}, false)
		if err != nil {
			return f, err
		}
		listen = append(listen, time.Since(t0))
		call := func(method, path string, body any, out any) (time.Duration, error) {
			var rd io.Reader
			if body != nil {
				b, _ := json.Marshal(body)
				rd = bytes.NewReader(b)
			}
			req, _ := http.NewRequest(method, svc.URL+path, rd)
			req.Header.Set("Authorization", "Bearer bench-token")
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			t := time.Now()
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			d := time.Since(t)
			if err != nil {
				return 0, err
			}
			if resp.StatusCode/100 != 2 {
				return 0, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
			}
			if out != nil {
				return d, json.Unmarshal(raw, out)
			}
			return d, nil
		}
		turn := func() (time.Duration, error) {
			return call("POST", "/v1/chat", map[string]any{"general_session_id": other, "stream": false,
				"message": map[string]any{"parts": []map[string]string{{"type": "text", "text": "one more question"}}}}, nil)
		}
		d, err := turn()
		if err != nil {
			svc.Kill()
			return f, err
		}
		first = append(first, d)
		if r == 0 {
			for range 20 {
				d, err := turn()
				if err != nil {
					svc.Kill()
					return f, err
				}
				warm = append(warm, d)
			}
			for range reps {
				d, err := call("GET", "/v1/sessions?limit=50", nil, nil)
				if err != nil {
					svc.Kill()
					return f, err
				}
				list = append(list, d)
				var msgs struct {
					Messages []json.RawMessage `json:"messages"`
				}
				if d, err = call("GET", "/v1/sessions/"+long+"/messages", nil, &msgs); err != nil {
					svc.Kill()
					return f, err
				}
				transcript = append(transcript, d)
				f.TranscriptLen = len(msgs.Messages)
				if d, err = call("GET", "/v1/sessions/search?limit=50&q="+url.QueryEscape("garden"), nil, nil); err != nil {
					svc.Kill()
					return f, err
				}
				common = append(common, d)
				if d, err = call("GET", "/v1/sessions/search?limit=50&q="+url.QueryEscape("kubernetes postgres"), nil, nil); err != nil {
					svc.Kill()
					return f, err
				}
				rare = append(rare, d)
			}
		}
		if err := svc.Stop(); err != nil {
			return f, err
		}
	}
	f.Listen, f.FirstTurn, f.WarmTurn = measure.Median(listen), measure.Median(first), measure.Median(warm)
	f.ListPage, f.Transcript, f.SearchCommon, f.SearchRare = measure.Median(list), measure.Median(transcript), measure.Median(common), measure.Median(rare)
	return f, nil
}
