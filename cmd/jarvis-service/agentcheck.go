package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"jarvis/service/roundtable"
)

// agentCheckUsage is printed for agent-check -h and usage errors.
const agentCheckUsage = `usage: jarvis-service agent-check URL [--api-key KEY] [--json] [--timeout DURATION]

Calls a round-table agent's POST /analyze, /challenge and /vote (docs/protocols/roundtable-agents.md)
with sample requests and reports, field by field, where its answers break
the protocol. Exit status: 0 conforms (warnings allowed), 1 breaks the
protocol, 2 usage error. The key may also come from $ROUNDTABLE_AGENT_API_KEY.
`

// agentCheck runs the agent-check subcommand and returns the exit status.
func agentCheck(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("jarvis-service agent-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, agentCheckUsage) }
	apiKey := fs.String("api-key", "", "the API key the agent was registered with (sent as Authorization: Bearer)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", 0, "give up on the whole check after this long (each call waits at most 120 s)")
	// The URL may come before or after the flags.
	var urls []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		urls = append(urls, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(urls) != 1 {
		fmt.Fprint(stderr, agentCheckUsage)
		return 2
	}
	if *apiKey == "" {
		*apiKey = getenv("ROUNDTABLE_AGENT_API_KEY")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	rep := roundtable.Check(ctx, nil, urls[0], *apiKey)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		fmt.Fprint(stdout, rep.String())
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "agent-check: stopped: %v\n", context.Cause(ctx))
	}
	if !rep.OK {
		return 1
	}
	return 0
}
