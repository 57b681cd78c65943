//go:build !unix

package instance

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile: on Windows the open file itself is the lock only while no other
// process opens it; Wails' SingleInstanceLock (a named mutex) guards the window.
func lockFile(*os.File) error { return nil }
