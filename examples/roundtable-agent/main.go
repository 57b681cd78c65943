// Command roundtable-agent is a complete round-table agent (docs/protocols/roundtable-agents.md) in Go,
// with no dependency outside the standard library: it implements POST
// /analyze, /challenge and /vote with simple rule-based reasoning, so that
// it can be run, registered and read as a starting point.
//
//	go run ./examples/roundtable-agent -addr 127.0.0.1:3001 -name my_agent -domain general
//
// With -api-key (or ROUNDTABLE_AGENT_API_KEY, which keeps the key out of the
// process list) every request must carry "Authorization: Bearer <key>".
// Once listening it prints exactly one line on stdout:
//
//	roundtable-agent listening on http://127.0.0.1:3001
//
// The handlers share no mutable state and are safe for concurrent requests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "roundtable-agent:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("roundtable-agent", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:3001", "listen address (port 0 picks a free one)")
	name := fs.String("name", "my_agent", "agent name, as registered")
	domain := fs.String("domain", "general", "area of expertise")
	apiKey := fs.String("api-key", "", "API key required in Authorization: Bearer (default $ROUNDTABLE_AGENT_API_KEY)")
	delay := fs.Duration("delay", 0, "wait this long before each answer (to test timeouts and parallelism)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *apiKey == "" {
		*apiKey = os.Getenv("ROUNDTABLE_AGENT_API_KEY")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	a := &agent{name: *name, domain: *domain, apiKey: *apiKey, delay: *delay, log: logger}
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("roundtable-agent listening on http://%s\n", ln.Addr())
	logger.Info("agent ready", "name", *name, "domain", *domain, "auth", *apiKey != "")

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
