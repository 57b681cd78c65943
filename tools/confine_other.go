//go:build !linux

package tools

func landlockABI() int { return 0 }

func restrictWrites([]string) error { return ErrUnsupported }

func execProgram(string, []string, []string) error { return ErrUnsupported }
