package fsperm

import (
	"errors"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data atomically and durably: a 0600 temp
// file in the same folder, synced, renamed over path. A crash leaves the
// old file or the new one, never a mix.
func WriteFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
