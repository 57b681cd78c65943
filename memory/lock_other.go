//go:build !unix

package memory

import "os"

// lockFile on non-Unix systems only creates the file: Windows refuses to
// share open SQLite files in the ways that matter less, and a second Store
// would at worst index twice. TODO(windows): LockFileEx.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
