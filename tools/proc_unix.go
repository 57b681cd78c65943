//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// killGroup puts the command in its own process group and makes
// cancellation kill the whole group, so a timed-out command's children die
// with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
