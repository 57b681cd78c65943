//go:build !linux

package taintlab

import "errors"

// setOrigin: the suites' download marks are Linux's extended attributes.
func setOrigin(string, string) error {
	return errors.New("taintlab: download marks are set on Linux only")
}
