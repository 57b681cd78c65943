package checkpoint

import (
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// linkInode gives the inode open as f a second name, dst, through the
// process's own /proc/self/fd link (linkat with AT_SYMLINK_FOLLOW, which
// needs no privilege, unlike AT_EMPTY_PATH): the very inode that was read
// and hashed, whatever its path now names. It fails with EXDEV across
// filesystems, EPERM where protected_hardlinks refuses, EEXIST when dst
// exists.
func linkInode(f *os.File, dst string) error {
	src, err := syscall.BytePtrFromString("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return err
	}
	to, err := syscall.BytePtrFromString(dst)
	if err != nil {
		return err
	}
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(src)),
			uintptr(atFdcwd), uintptr(unsafe.Pointer(to)), atSymlinkFollow, 0)
		runtime.KeepAlive(f)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: e}
	}
}

var atFdcwd = -0x64 // AT_FDCWD (a variable: a negative constant cannot convert to uintptr)

const atSymlinkFollow = 0x400 // AT_SYMLINK_FOLLOW

// links is the number of names fi's inode has (1 where unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
