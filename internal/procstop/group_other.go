//go:build !unix

package procstop

import (
	"errors"
	"os/exec"
)

// Without Unix signals there is no graceful stage: the first two stages are
// no-ops and the last kills the process.
type Stage struct {
	Name string
	kill bool
}

var stages = []Stage{
	{"interrupt (unsupported)", false},
	{"terminate (unsupported)", false},
	{"kill", true},
}

func setProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, s Stage) error {
	if !s.kill {
		return errors.ErrUnsupported
	}
	return cmd.Process.Kill()
}

func killGroup(*exec.Cmd) {}
