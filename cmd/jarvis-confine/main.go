// Command jarvis-confine is the confinement helper of the programs Jarvis
// starts (package jarvis/tools/confine): installed next to the jarvis
// binary, it is what run_command, ACP terminals and MCP servers start
// through, because it starts in about a millisecond where re-executing the
// jarvis binary (`jarvis __confine`, the fallback) loads the whole desktop
// stack first.
//
//	jarvis-confine --rw DIR… [--net] -- PROGRAM ARG…
package main

import (
	"fmt"
	"os"

	"jarvis/tools/confine"
)

func main() {
	err := confine.Main(os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "sandbox:", err)
	os.Exit(126)
}
