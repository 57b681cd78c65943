// Command external-echo is a complete external agent (docs/protocols/external-agents.md) in Go, with
// no dependency outside the standard library. Jarvis POSTs each user message
// to its inputUrl; it answers 202 at once and then replies later, several
// times, with Markdown, by POSTing to the callbackUrl it was given.
//
//	go run ./examples/external-echo -addr 127.0.0.1:9090
//
// and in Jarvis's config.json:
//
//	{"agents": [{"agentId": "echo", "displayName": "Echo (external)", "type": "external",
//	             "external": {"inputUrl": "http://127.0.0.1:9090/"}}]}
//
// With -secret-env NAME (default EXTERNAL_ECHO_SECRET) set to the same
// secret as the agent's external.secretRef, replies are signed with Standard
// Webhooks headers, and a retried reply keeps its webhook-id so Jarvis never
// shows it twice. Once listening it prints exactly one line on stdout:
//
//	external-echo listening on http://127.0.0.1:9090
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

	"jarvis/service/webhook"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "external-echo:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("external-echo", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9090", "listen address (port 0 picks a free one)")
	delay := fs.Duration("delay", 300*time.Millisecond, "wait before each reply")
	replies := fs.Int("replies", 3, "replies per message (at least 1)")
	secretEnv := fs.String("secret-env", "EXTERNAL_ECHO_SECRET", "environment variable holding the webhook secret (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *replies < 1 {
		return errors.New("-replies must be at least 1")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	a := &Agent{Delay: *delay, Replies: *replies, Secret: os.Getenv(*secretEnv), Log: logger}
	if a.Secret != "" {
		if _, err := webhook.Key(a.Secret); err != nil {
			return fmt.Errorf("$%s: %w", *secretEnv, err)
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("external-echo listening on http://%s\n", ln.Addr())
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	a.Wait(sctx) // let replies in flight finish
	return nil
}
