//go:build !unix

package tools

import "os/exec"

// killGroup keeps exec's default cancellation (kill the process) where
// process groups are not available.
func killGroup(cmd *exec.Cmd) {}
