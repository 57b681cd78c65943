//go:build linux

package tools

import (
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// restrictWrites lets the process (every thread, and what it execs) read
// everything but write only inside rw and to /dev/null. Best effort maps
// the rules onto the kernel's ABI; on a kernel without Landlock the helper
// is never used (Executor.confined).
func restrictWrites(rw []string) error {
	return landlock.V11.BestEffort().RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWDirs(rw...).WithRefer(),
		landlock.RWFiles("/dev/null").IgnoreIfMissing(),
	)
}

func execProgram(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
