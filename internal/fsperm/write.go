package fsperm

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
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

// SyncDir makes the entries of folder dir durable (a rename or a link in
// it). Only Linux's answer counts: Windows cannot sync a folder and macOS's
// full sync of one is not promised to work; there an entry is as durable as
// the file system makes it.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = errors.Join(d.Sync(), d.Close())
	if runtime.GOOS != "linux" {
		return nil
	}
	return err
}
