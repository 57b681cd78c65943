package tools

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// CurrentFile reads what is now at path in the workspace, for showing the
// user what a write would replace: at most limit bytes, and the file's full
// size. The path is resolved as a file tool's would be (inside the
// workspace, symlinks evaluated, Jarvis's data folder refused) and read
// through the workspace's os.Root. A missing file is fs.ErrNotExist; a
// folder or other non-regular file is ErrBadArguments.
func (e *Executor) CurrentFile(path string, limit int64) (data []byte, size int64, err error) {
	rel, err := e.ws.resolve(path)
	if err != nil {
		return nil, 0, err
	}
	f, fi, err := e.openRegular(rel)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit))
	return data, fi.Size(), err
}

// openRegular opens a resolved workspace path through the root and checks
// that it is a regular file (not a folder, device or pipe).
func (e *Executor) openRegular(rel string) (*os.File, fs.FileInfo, error) {
	f, err := e.ws.root.Open(rel)
	if err != nil {
		return nil, nil, rootErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrBadArguments, display(rel))
	}
	return f, fi, nil
}
