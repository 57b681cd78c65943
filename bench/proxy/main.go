// Command proxybench measures the per-request overhead of proxy agents,
// each against a same-run baseline: a plain http.Client POST of the same
// Agent Protocol body to the same scripted agent (proxytest, on a loopback
// httptest server), sequential and interleaved so both see the same machine
// state. It prints Markdown tables of the latencies and the overhead at the
// median and p99:
//
//   - the proxy client (service/proxy): proxy.Client.Call;
//
//   - the full service (-service-n turns, 0 to skip): a proxy-agent turn
//     through the real service in this process, POST /v1/chat with
//     stream=false over loopback HTTP, SQLite in a temp dir (service.go).
//
//     go run -tags sqlite_fts5 ./bench/proxy -n 5000 -service-n 3000
//
// The plain POST only reads the response bytes; Call also validates the
// definition, renders the request, resolves a header secret, enforces the
// size cap and decodes the answer. That difference is the overhead.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"time"

	"jarvis/service/proxy"
	"jarvis/service/proxy/proxytest"
)

func main() {
	n := flag.Int("n", 5000, "measured requests per path")
	warmup := flag.Int("warmup", 500, "unmeasured requests per path first")
	serviceN := flag.Int("service-n", 3000, "measured proxy-agent turns through the service (0: skip)")
	flag.Parse()
	res, err := measure(context.Background(), *n, *warmup)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
	if *serviceN <= 0 {
		return
	}
	sres, err := measureService(context.Background(), *serviceN, *warmup)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxybench: service:", err)
		os.Exit(1)
	}
	fmt.Println()
	sres.print(os.Stdout)
}

type results struct {
	n            int
	plain, proxy []time.Duration // sorted
}

func measure(ctx context.Context, n, warmup int) (results, error) {
	agent := &proxytest.Agent{}
	srv := httptest.NewServer(agent.Handler())
	defer srv.Close()

	client, err := proxy.New(proxy.Options{
		Secrets: func(string) (string, error) { return "bench-token", nil },
	})
	if err != nil {
		return results{}, err
	}
	def := proxy.Definition{
		Profile: proxy.Profile{Name: "bench"},
		URL:     srv.URL + "/sync",
		Headers: map[string]string{"Authorization": "Bearer {{secret:bench}}"},
	}
	in := proxy.Input{SessionID: "bench-session", UserID: "bench-user", Text: "How long does this take?"}
	body, err := proxy.RenderBody(def, in)
	if err != nil {
		return results{}, err
	}
	plainClient := &http.Client{}
	want := proxytest.Answer(in.Text)

	plain := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, def.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer bench-token")
		res, err := plainClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	call := func() error {
		resp, err := client.Call(ctx, def, in, nil)
		if err == nil && resp.Output != want {
			err = fmt.Errorf("unexpected output %q", resp.Output)
		}
		return err
	}
	timed := func(f func() error) (time.Duration, error) {
		start := time.Now()
		err := f()
		return time.Since(start), err
	}

	r := results{n: n, plain: make([]time.Duration, 0, n), proxy: make([]time.Duration, 0, n)}
	for i := range warmup + n {
		// Alternate which path goes first so neither always runs on a
		// connection that has just been used.
		first, second := plain, call
		if i%2 == 1 {
			first, second = call, plain
		}
		d1, err := timed(first)
		if err != nil {
			return r, err
		}
		d2, err := timed(second)
		if err != nil {
			return r, err
		}
		if i < warmup {
			continue
		}
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		r.plain = append(r.plain, d1)
		r.proxy = append(r.proxy, d2)
	}
	slices.Sort(r.plain)
	slices.Sort(r.proxy)
	return r, nil
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)-1) + 0.5)
	return sorted[i]
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

func (r results) print(w io.Writer) {
	fmt.Fprintf(w, "Proxy client overhead: %d sequential requests per path, %s, GOMAXPROCS=%d, %s/%s\n\n",
		r.n, runtime.Version(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	overheadTable(w, "plain http.Client POST", r.plain, "proxy.Client.Call", r.proxy, "added by Call")
}

// overheadTable writes the median, p99 and mean of a baseline and of the
// measured path (both sorted), what the path adds, and the goal.
func overheadTable(w io.Writer, baseName string, base []time.Duration, name string, got []time.Duration, added string) {
	fmt.Fprintln(w, "| path | median (ms) | p99 (ms) | mean (ms) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", baseName, ms(quantile(base, .5)), ms(quantile(base, .99)), ms(mean(base)))
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, ms(quantile(got, .5)), ms(quantile(got, .99)), ms(mean(got)))
	fmt.Fprintf(w, "| **%s** | **%s** | %s | %s |\n", added,
		ms(quantile(got, .5)-quantile(base, .5)), ms(quantile(got, .99)-quantile(base, .99)), ms(mean(got)-mean(base)))
	fmt.Fprintln(w, "\nGoal: under 0.5 ms added at the median.")
}
