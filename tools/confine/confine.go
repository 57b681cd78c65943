// Package confine is the confinement helper of the programs Jarvis starts
// (the small jarvis-confine binary, and the jarvis binary's hidden
// "__confine" subcommand): Main applies Landlock and a seccomp filter to
// its own thread and execs the program from that same thread, so the
// program and everything it starts inherit both. It imports nothing of
// Jarvis, so its binary starts in about a millisecond (the jarvis binary
// loads the whole desktop stack first). tools.Sandbox builds its command
// line; tools' escape tests check what it holds.
package confine

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsupported is returned where the helper does not exist (not Linux).
var ErrUnsupported = errors.New("confinement is supported on Linux only")

// Main is the helper: args are "--rw DIR"… ["--net"] "--" PROGRAM ARG…;
// it confines itself (writes only in the --rw folders and /dev/null; no
// network without --net; no Unix sockets, signals or ptrace outside), then
// replaces itself with PROGRAM (an absolute path) and the environment env.
// It returns only on failure.
func Main(args, env []string) error {
	var rw []string
	network := false
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "--net":
			network = true
			args = args[1:]
		case args[0] == "--rw" && len(args) >= 2:
			rw = append(rw, args[1])
			args = args[2:]
		default:
			return errors.New("confine: usage: --rw DIR… [--net] -- PROGRAM ARG…")
		}
	}
	if len(args) < 2 || !strings.HasPrefix(args[1], "/") {
		return errors.New("confine: an absolute program path must follow --")
	}
	if err := restrictAndExec(rw, network, args[1], args[1:], env); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	return nil
}
