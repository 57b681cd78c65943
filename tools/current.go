package tools

import (
	"fmt"
	"io"
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
	f, err := e.ws.root.Open(rel)
	if err != nil {
		return nil, 0, rootErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%w: %s is not a regular file", ErrBadArguments, display(rel))
	}
	data, err = io.ReadAll(io.LimitReader(f, limit))
	return data, fi.Size(), err
}
