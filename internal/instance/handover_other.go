//go:build !linux

package instance

import "errors"

// Handover is implemented for Linux (D-Bus); elsewhere the second launch
// only says that Jarvis is already running.
func Handover(string, []string) error {
	return errors.New("handing over to the running window is implemented on Linux only")
}
