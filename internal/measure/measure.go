// Package measure holds what the benchmark programs under bench/ share:
// percentiles of latency samples, their formatting in the Markdown tables,
// and a process's memory and CPU read from /proc. Pure functions, safe for
// concurrent use.
package measure

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Percentile returns the p-th percentile (0–100, nearest rank) of samples; 0 for none.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Median is the 50th percentile.
func Median(samples []time.Duration) time.Duration { return Percentile(samples, 50) }

// Ms formats a duration in milliseconds with three decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// MB formats kibibytes as megabytes.
func MB(kb int) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// Verdict is the "met" cell of a table row.
func Verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// RSSKB is a process's resident set size in KiB (Linux; 0 elsewhere).
func RSSKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// CPU is a process's user plus system CPU time so far (Linux; 0 elsewhere).
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which may contain spaces, in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}
