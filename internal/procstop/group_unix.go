//go:build unix

package procstop

import (
	"errors"
	"os/exec"
	"syscall"
)

type Stage struct {
	Name string
	sig  syscall.Signal
}

var stages = []Stage{
	{"SIGINT", syscall.SIGINT},
	{"SIGTERM", syscall.SIGTERM},
	{"SIGKILL", syscall.SIGKILL},
}

// setProcessGroup puts the CLI in a new process group so a signal reaches
// the tools it runs too, and a terminal's Ctrl-C aimed at us does not.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, s Stage) error {
	err := syscall.Kill(-cmd.Process.Pid, s.sig)
	if errors.Is(err, syscall.ESRCH) {
		// The group is gone; the leader may still be a zombie awaiting Wait.
		return cmd.Process.Signal(s.sig)
	}
	return err
}

// killGroup kills whatever is left of the CLI's process group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
