package checkpoint

import (
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// linkInode gives the inode open as f a second name, dst, through the
// process's own /proc/self/fd link (linkat with AT_SYMLINK_FOLLOW, which
// needs no privilege, unlike AT_EMPTY_PATH): the very inode that was read
// and hashed, whatever its path now names. It fails with EXDEV across
// filesystems, EPERM where protected_hardlinks refuses, EEXIST when dst
// exists.
func linkInode(f *os.File, dst string) error {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for {
		err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
		runtime.KeepAlive(f)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: err}
		}
		return nil
	}
}

// links is the number of names fi's inode has (1 where unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
