//go:build !linux

package events

// yieldCPU is Linux only: elsewhere a woken reader is not known to wait for
// the writer's core.
func yieldCPU() {}
