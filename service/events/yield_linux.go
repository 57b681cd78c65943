package events

import "syscall"

// yieldCPU gives the rest of this thread's time slice to the tasks waiting
// for its core (sched_yield).
func yieldCPU() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
