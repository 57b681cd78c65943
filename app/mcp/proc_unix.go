//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in its own process group, so stopping it
// stops the programs it started too (npx → node).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
