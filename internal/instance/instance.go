// Package instance keeps one desktop process per data dir. Acquire takes an
// exclusive lock on <data-dir>/jarvis.lock before the service opens its
// database, so two processes never share one; a second launch finds the lock
// held and hands its arguments to the first (Handover) over the same D-Bus
// name Wails' SingleInstanceLock exports in the first process, whose window
// then comes to the front. UniqueID is that lock's id, derived from the data
// dir, so that two Jarvis windows on two data dirs stay independent. The
// lock's holder also answers requests on the data dir's control socket
// (control.go: Listen, Call), the two-way handover `jarvis undo` uses.
package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrRunning means another process holds the data dir's lock.
var ErrRunning = errors.New("another Jarvis is running with this data dir")

// ErrNoBus means Handover has no D-Bus session bus to reach the window by.
var ErrNoBus = errors.New("no D-Bus session bus to reach the running window")

// Lock is a held data-dir lock; Release (or the process's exit) frees it.
type Lock struct{ f *os.File }

// LockFile is the lock's file name in the data dir.
const LockFile = "jarvis.lock"

// Acquire takes the data dir's lock without waiting. When another process
// holds it the error wraps ErrRunning and names that process's pid.
func Acquire(dataDir string) (*Lock, error) {
	path := filepath.Join(dataDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errLocked) {
			pid := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("%w (pid %s, lock %s)", ErrRunning, pid, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// The pid is for the message a second launch prints; the lock is the flock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release frees the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// UniqueID is the single-instance id for a data dir: the same dir (after
// resolving it to an absolute, clean path) always gives the same id.
func UniqueID(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return "jarvis-" + hex.EncodeToString(sum[:8])
}
