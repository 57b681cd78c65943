//go:build !linux

package tools

func landlockABI() int { return 0 }

func seccompAvailable() bool { return false }

func restrict([]string, bool) error { return ErrUnsupported }

func execProgram(string, []string, []string) error { return ErrUnsupported }
