// Command longsession benchmarks one long-lived chat session: the real
// jarvis-service binary (built here) in front of the scripted upstream as
// its own process, with a model window of 8,192 tokens (which the upstream
// reports in GET /v1/models, as vLLM does, and enforces with OpenAI's
// context_length_exceeded error) and user messages of about 1 KB, answered
// by replies of about the same size.
//
//	go run ./bench/longsession [-turns 2000] [-limit 8192] [-every 20]
//
// Every turn must succeed and no request may pass the window. The figure is
// the median service time (the client's time for a non-streamed turn) of
// the last 100 turns against the first 100; the baseline, measured in the
// same run, is the first turn of a fresh session, one every -every turns,
// interleaved with the long session. It prints a Markdown table.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/internal/measure"
	"jarvis/internal/proc"
)

func main() {
	turns := flag.Int("turns", 2000, "turns of the long session")
	limit := flag.Int("limit", 8192, "the model's context window, in tokens")
	every := flag.Int("every", 20, "a fresh session's first turn every this many turns (the baseline)")
	flag.Parse()
	if err := run(*turns, *limit, *every); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// message is the user's message of turn i: about 1 KB of text.
func message(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d. ", i)
	words := []string{"the", "service", "keeps", "a", "summary", "of", "older", "turns", "and", "sends", "recent", "ones", "verbatim"}
	for j := 0; b.Len() < 1000; j++ {
		b.WriteString(words[(i+j)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

func run(turns, limit, every int) error {
	if turns < 200 {
		return fmt.Errorf("-turns must be at least 200 (the first and last 100 are compared)")
	}
	tmp, err := os.MkdirTemp("", "jarvis-longsession")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := proc.BuildService(tmp)
	if err != nil {
		return err
	}
	peerBin, err := proc.Build(tmp, "jarvis/internal/testpeer/cmd/openai-peer")
	if err != nil {
		return err
	}
	peer, err := proc.Start(peerBin, []string{"-context-limit", fmt.Sprint(limit), "-model", "bench-model"}, nil, true)
	if err != nil {
		return err
	}
	defer peer.Kill()
	cfg := filepath.Join(tmp, "config.json")
	// No contextWindow: the service takes it from the server.
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"bench-model"}}}`, peer.URL+"/v1")), 0o600); err != nil {
		return err
	}
	svc, err := proc.Start(bin, []string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(tmp, "data"), "--trust-config", "--config", cfg, "--log-level", "warn"},
		[]string{"JARVIS_TOKEN=bench-token"}, true)
	if err != nil {
		return err
	}
	defer svc.Kill()
	c := api.NewClient(svc.URL, "bench-token", &http.Client{})
	ctx := context.Background()

	turn := func(sid, text string) (time.Duration, error) {
		start := time.Now()
		r, err := c.Chat(ctx, sid, text)
		d := time.Since(start)
		if err != nil {
			return d, err
		}
		if len(r.Assistant.Parts) == 0 || r.Assistant.Parts[0].Text == "" {
			return d, fmt.Errorf("empty answer")
		}
		return d, nil
	}
	long, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "long"})
	if err != nil {
		return err
	}
	times := make([]time.Duration, 0, turns)
	var fresh []time.Duration
	freshAt := map[int][]time.Duration{} // by block of 100 turns
	for i := 0; i < turns; i++ {
		d, err := turn(long.GeneralSessionID, message(i))
		if err != nil {
			return fmt.Errorf("turn %d of the long session: %w", i+1, err)
		}
		times = append(times, d)
		if i%every == 0 {
			s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("fresh-%d", i)})
			if err != nil {
				return err
			}
			d, err := turn(s.GeneralSessionID, message(i))
			if err != nil {
				return fmt.Errorf("fresh session at turn %d: %w", i+1, err)
			}
			fresh = append(fresh, d)
			freshAt[i/100] = append(freshAt[i/100], d)
		}
	}
	var detail api.SessionDetail
	if err := c.Do(ctx, http.MethodGet, "/v1/sessions/"+long.GeneralSessionID, nil, &detail); err != nil {
		return err
	}
	var pc struct{ LargestPrompt, Overflows int }
	resp, err := http.Get(peer.URL + "/debug/context")
	if err != nil {
		return err
	}
	json.NewDecoder(resp.Body).Decode(&pc)
	resp.Body.Close()

	first, last := measure.Median(times[:100]), measure.Median(times[len(times)-100:])
	base := measure.Median(fresh)
	ratio := float64(last) / float64(first)
	fmt.Printf("### Long-lived session (bench/longsession)\n\n`go run ./bench/longsession -turns %d -limit %d -every %d`: one session of %d non-streamed turns (a ~1 KB message, a ~1 KB reply)\n"+
		"through the real service, against the scripted upstream with a window of %d tokens (reported in /v1/models, enforced with\n"+
		"OpenAI's context_length_exceeded); the baseline is the first turn of a fresh session every %d turns, in the same run.\n", turns, limit, every, turns, limit, every)
	fmt.Printf("\n| figure | value | goal |\n|---|---|---|\n")
	fmt.Printf("| turns of one session (each ~1 KB in, ~1 KB out) | %d, all succeeded | every turn succeeds |\n", turns)
	fmt.Printf("| window (taken from the server) | %d tokens (source %s) | |\n", detail.Context.Window, detail.Context.Source)
	fmt.Printf("| largest request the upstream received | %d tokens | at most %d %s |\n", pc.LargestPrompt, limit, measure.Verdict(pc.LargestPrompt <= limit))
	fmt.Printf("| requests refused for passing the window | %d | 0 %s |\n", pc.Overflows, measure.Verdict(pc.Overflows == 0))
	fmt.Printf("| compactions | %d | |\n", detail.Context.Compactions)
	fmt.Printf("| context use at the end | %d of %d tokens | |\n", detail.Context.Tokens, detail.Context.Window)
	fmt.Printf("| median service time, turns 1-100 | %s | |\n", measure.Ms(first))
	fmt.Printf("| median service time, turns %d-%d | %s | |\n", turns-99, turns, measure.Ms(last))
	fmt.Printf("| last 100 / first 100 | %.2fx | at most 1.5x %s |\n", ratio, measure.Verdict(ratio <= 1.5))
	fmt.Printf("| baseline: a fresh session's first turn (median of %d, same run) | %s | |\n", len(fresh), measure.Ms(base))
	fmt.Printf("| last 100 / fresh session | %.2fx | |\n", float64(last)/float64(base))
	// The machine's load varies over a run (other processes share the
	// cores): each block against the fresh sessions measured during it.
	fb, lb := measure.Median(freshAt[0]), measure.Median(freshAt[(turns-1)/100])
	fmt.Printf("| the same, each block against its own fresh sessions | %.2fx / %.2fx = %.2fx | |\n",
		float64(last)/float64(lb), float64(first)/float64(fb), (float64(last)/float64(lb))/(float64(first)/float64(fb)))
	fmt.Printf("\nMedian service time by block of 100 turns, with the fresh sessions measured during the block:\n\n| turns | long session | fresh session |\n|---|---|---|\n")
	for k := 0; k*100 < len(times); k++ {
		block := times[k*100 : min(len(times), k*100+100)]
		fmt.Printf("| %d-%d | %s | %s |\n", k*100+1, k*100+len(block), measure.Ms(measure.Median(block)), measure.Ms(measure.Median(freshAt[k])))
	}
	return nil
}
