// Command openai-peer runs the scripted OpenAI-compatible upstream of package
// testpeer as its own process, for benchmarks (a real upstream is never in
// the client's process) and for trying Jarvis by hand with no model:
//
//	go run ./internal/testpeer/cmd/openai-peer -addr 127.0.0.1:11435
//
// then use http://127.0.0.1:11435/v1 as an openai-compatible baseUrl. Its
// first stdout line is "openai-peer listening on http://ADDR". GET
// /debug/last-request returns the last chat request it received (JSON).
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
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openai-peer:", err)
		os.Exit(1)
	}
	peer := testpeer.NewOpenAI()
	peer.Keep = 1 // GET /debug/last-request is all that reads them
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
	fmt.Printf("openai-peer listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "openai-peer:", err)
		os.Exit(1)
	}
}
