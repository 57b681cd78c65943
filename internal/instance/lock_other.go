//go:build !unix

package instance

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile is not implemented off Unix: there the data-dir lock is not
// taken, and only Wails' own SingleInstanceLock (a named mutex on Windows)
// keeps a second window from opening, after its service has started.
func lockFile(*os.File) error { return nil }
