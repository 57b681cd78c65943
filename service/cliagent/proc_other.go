//go:build !unix

package cliagent

import (
	"errors"
	"os/exec"
	"runtime"
)

const isWindows = runtime.GOOS == "windows"

// Without Unix signals there is no graceful stage: the first two stages are
// no-ops and the last kills the process.
type stopSignal struct {
	name string
	kill bool
}

var stopSignals = []stopSignal{
	{"interrupt (unsupported)", false},
	{"terminate (unsupported)", false},
	{"kill", true},
}

func setProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, s stopSignal) error {
	if !s.kill {
		return errors.ErrUnsupported
	}
	return cmd.Process.Kill()
}

func killGroup(*exec.Cmd) {}
