package procstop

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// procID names a process beyond its pid: the start time tells a process
// from a later one that reuses its pid.
type procID struct {
	pid, pgid int
	start     uint64
}

// procStat reads a process's parent, process group and start time from
// /proc/<pid>/stat.
func procStat(pid int) (ppid int, id procID, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, procID{}, false
	}
	// The command name is parenthesized and may hold anything; the fields
	// after it are: state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, procID{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || f[0][0] == 'Z' {
		return 0, procID{}, false
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return ppid, procID{pid: pid, pgid: pgid, start: start}, true
}

// addDescendants adds every live descendant of root to seen: the tools a
// CLI started, also those in a process group or session of their own
// (detached), which a signal to the CLI's group does not reach. It must run
// while the CLI is alive: an orphan is re-parented and leaves the tree.
func addDescendants(root int, seen map[int]procID) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	children := map[int][]procID{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, id, ok := procStat(pid); ok {
			children[ppid] = append(children[ppid], id)
		}
	}
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if _, dup := seen[c.pid]; !dup {
				seen[c.pid] = c
				queue = append(queue, c.pid)
			}
		}
	}
}

// signalTree sends s to each process in seen that is still the same
// process, and to its process group when that is not the CLI's (already
// signalled) nor ours.
func signalTree(seen map[int]procID, leader int, s Stage) {
	sig := s.sig
	own := syscall.Getpgrp()
	for pid, id := range seen {
		if _, now, ok := procStat(pid); !ok || now.start != id.start {
			delete(seen, pid)
			continue
		}
		if id.pgid > 1 && id.pgid != leader && id.pgid != own {
			_ = syscall.Kill(-id.pgid, sig)
		}
		_ = syscall.Kill(pid, sig)
	}
}
