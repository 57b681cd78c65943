// Command openai-peer runs the scripted OpenAI-compatible upstream of package
// testpeer as its own process, for benchmarks (a real upstream is never in
// the client's process) and for trying Jarvis by hand with no model:
//
//	go run ./internal/testpeer/cmd/openai-peer -addr 127.0.0.1:11435
//
// then use http://127.0.0.1:11435/v1 as an openai-compatible baseUrl. Its
// first stdout line is "openai-peer listening on http://ADDR". GET
// /debug/last-request returns the last chat request it received (JSON);
// GET /debug/context returns the largest prompt it received, in tokens, and
// how many requests it refused for passing -context-limit.
//
// With -weekday-notes YYYY-MM-DD it is the scripted model of the
// scheduled-tasks scenario instead (testpeer.WeekdayNotes, with that day as
// today): scripts/e2e.sh runs it for the window, the headless process and the
// window again, which must all reach the same model.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"jarvis/internal/testpeer"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	limit := flag.Int("context-limit", 0, "the model's context window in tokens (0: none); reported in GET /v1/models")
	model := flag.String("model", "test-model", "the model id GET /v1/models lists")
	weekday := flag.String("weekday-notes", "", "be the scripted model of the weekday-notes task scenario, with this day (YYYY-MM-DD) as today")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openai-peer:", err)
		os.Exit(1)
	}
	peer := testpeer.NewOpenAI()
	peer.Keep = 1 // GET /debug/last-request is all that reads them
	peer.ContextLimit, peer.Model = *limit, *model
	if *weekday != "" {
		if peer.Respond, err = testpeer.WeekdayNotes(*weekday); err != nil {
			fmt.Fprintln(os.Stderr, "openai-peer: -weekday-notes:", err)
			os.Exit(2)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", peer)
	mux.HandleFunc("GET /debug/last-request", func(w http.ResponseWriter, r *http.Request) {
		reqs := peer.Requests()
		if len(reqs) == 0 {
			http.Error(w, "no request yet", http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(reqs[len(reqs)-1])
	})
	mux.HandleFunc("GET /debug/context", func(w http.ResponseWriter, r *http.Request) {
		largest, overflows := peer.MaxPromptTokens()
		json.NewEncoder(w).Encode(map[string]int{"largestPrompt": largest, "overflows": overflows})
	})
	fmt.Printf("openai-peer listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "openai-peer:", err)
		os.Exit(1)
	}
}
