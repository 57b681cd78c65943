// Command jarvis-audit verifies and exports the desktop's audit log.
//
//	jarvis-audit verify -db PATH [-key-dir DIR]
//	jarvis-audit export -db PATH [-key-dir DIR] [-tool T] [-decision allowed|denied] [-by WHO] [-session ID] [-since RFC3339] [-until RFC3339] [-limit N]
//
// verify prints a JSON report and exits 1 when the chain is broken, naming
// the first tampered row. export writes JSON Lines to stdout. The chain key
// is read from the OS keyring (JARVIS_SECRET_AUDIT_CHAIN_KEY overrides it)
// or from -key-dir (default <user config dir>/jarvis/audit), which also
// holds the head anchor.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"jarvis/app/audit"
	"jarvis/service/secrets"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "verify" && args[0] != "export") {
		fmt.Fprintln(stderr, "usage: jarvis-audit verify|export -db PATH [flags]")
		return 2
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "audit database file")
	keyDir := fs.String("key-dir", "", "folder of the chain key file and head anchor (default <user config dir>/jarvis/audit)")
	var f audit.Filter
	var since, until string
	if args[0] == "export" {
		fs.StringVar(&f.Tool, "tool", "", "only this tool")
		fs.StringVar(&f.Decision, "decision", "", "allowed or denied")
		fs.StringVar(&f.DecidedBy, "by", "", "policy, user, session, timeout or error")
		fs.StringVar(&f.SessionID, "session", "", "only this session id")
		fs.StringVar(&since, "since", "", "from this time (RFC 3339), inclusive")
		fs.StringVar(&until, "until", "", "up to this time (RFC 3339), exclusive")
		fs.IntVar(&f.Limit, "limit", 0, "at most this many rows (0: all)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	for _, p := range []struct {
		s string
		t *time.Time
	}{{since, &f.Since}, {until, &f.Until}} {
		if p.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, p.s)
		if err != nil {
			fmt.Fprintln(stderr, "jarvis-audit:", err)
			return 2
		}
		*p.t = t
	}
	if *db == "" {
		fmt.Fprintln(stderr, "jarvis-audit: -db is required")
		return 2
	}
	// Opening creates a missing file; a typo must not verify as an empty log.
	if _, err := os.Stat(*db); err != nil {
		fmt.Fprintln(stderr, "jarvis-audit:", err)
		return 1
	}
	l, err := audit.Open(*db, audit.Options{KeyDir: *keyDir, Keyring: secrets.New(os.Getenv)})
	if err != nil {
		fmt.Fprintln(stderr, "jarvis-audit:", err)
		return 1
	}
	defer l.Close()
	ctx := context.Background()
	if args[0] == "export" {
		if err := l.ExportJSONL(ctx, stdout, f); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "jarvis-audit:", err)
			return 1
		}
		return 0
	}
	rep, err := l.Verify(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "jarvis-audit:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.Encode(rep)
	if !rep.OK {
		fmt.Fprintf(stderr, "jarvis-audit: chain broken at row %d: %s\n", rep.FirstBadID, rep.Reason)
		return 1
	}
	return 0
}
