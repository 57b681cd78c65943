//go:build unix

package app

import (
	"os/exec"
	"syscall"
)

// detach gives cmd a session of its own.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
