// Package procstop ends a program Jarvis started together with everything
// that program started: the program runs in a process group of its own
// (SetGroup), and each stop stage (SIGINT, SIGTERM, SIGKILL on Unix) goes to
// that group and, on Linux, to every descendant found in /proc, also those
// that left the group (a tool run detached, in a session of its own). On
// platforms without process groups the program itself is killed.
package procstop

import "os/exec"

// Stages are the stop stages in order, gentlest first; the last kills.
func Stages() []Stage { return stages }

// SetGroup makes cmd (not yet started) lead a new process group, so a
// signal reaches what it starts too, and a terminal's Ctrl-C aimed at
// Jarvis does not reach it.
func SetGroup(cmd *exec.Cmd) { setProcessGroup(cmd) }

// Tree remembers the processes a started program has started. Descendants
// must be found while the program lives (an orphan is re-parented and
// leaves the tree), so each Signal collects them before signalling. A Tree
// is used by one goroutine at a time.
type Tree struct {
	seen map[int]procID
}

// NewTree returns an empty Tree.
func NewTree() *Tree { return &Tree{seen: map[int]procID{}} }

// Signal sends stage s to cmd's descendants outside its group, then to its
// group. It returns errors.ErrUnsupported when the platform has no such
// stage (nothing was sent: don't wait for an effect).
func (t *Tree) Signal(cmd *exec.Cmd, s Stage) error {
	addDescendants(cmd.Process.Pid, t.seen)
	signalTree(t.seen, cmd.Process.Pid, s)
	return signalGroup(cmd, s)
}

// Kill kills whatever is left of cmd's group and of the descendants seen.
func (t *Tree) Kill(cmd *exec.Cmd) {
	killGroup(cmd)
	signalTree(t.seen, cmd.Process.Pid, stages[len(stages)-1])
}
