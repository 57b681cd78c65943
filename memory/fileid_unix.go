//go:build unix

package memory

import (
	"io/fs"
	"syscall"
)

// inode returns fi's inode number, 0 when unknown.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
