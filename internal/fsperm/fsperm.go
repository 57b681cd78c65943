// Package fsperm owns the file modes of Jarvis's data: the data dir is
// 0700 and the files in it that hold secrets or records (the databases,
// the API token, the policy, the memory index) 0600. Dir and File enforce
// that at start: a wrong mode is repaired, and what cannot be repaired (a
// folder or file of another user) is refused with an error that says why.
//
// On Windows, where access is governed by ACLs inherited from the user's
// profile folder, both only make sure that the folder exists.
package fsperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// Modes Jarvis keeps its data with.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// Dir makes dir exist with mode 0700: created so, or repaired. A dir of
// another user, or one whose mode cannot be changed, is refused.
func Dir(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data dir %s is not a folder", dir)
	}
	return repair(dir, fi, DirMode, "data dir")
}

// File repairs path's mode to 0600, and that of SQLite's companion files
// (-wal, -shm, -journal) when they exist. With create, a missing path is
// created empty with mode 0600 first (an empty file is a valid empty SQLite
// database, and SQLite gives its companion files the database's mode); a
// missing path is otherwise left alone. A file of another user is refused.
func File(path string, create bool) error {
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		switch {
		case err == nil:
			if err := f.Close(); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrExist):
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; Jarvis keeps its data in plain files (remove the link)", p)
		}
		if err := repair(p, fi, FileMode, "file"); err != nil {
			return err
		}
	}
	return nil
}

// repair checks the owner and sets the mode when it differs.
func repair(path string, fi fs.FileInfo, want fs.FileMode, what string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s %s belongs to another user (uid %d, you are %d): Jarvis refuses to keep its token and databases where another user controls them; use another --data-dir or fix the owner", what, path, uid, os.Getuid())
	}
	if fi.Mode().Perm() == want {
		return nil
	}
	if err := os.Chmod(path, want); err != nil {
		return fmt.Errorf("%s %s has mode %o and could not be made %o: %w", what, path, fi.Mode().Perm(), want, err)
	}
	return nil
}
