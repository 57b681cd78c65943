//go:build unix

package listener

import "syscall"

// openFilesLimit is the soft RLIMIT_NOFILE. The Go runtime raises it at
// start to one below the hard limit (it keeps that one as a marker so that
// the programs the service starts get their original limit back: programs
// using select() break above 1024); the service keeps that and sizes its
// connection cap from it.
func openFilesLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 1024
	}
	return l.Cur
}
