package instance

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// samePeer refuses a connection from another user (SO_PEERCRED), beside
// the socket file's mode.
func samePeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("control socket: user %d may not use this instance", cred.Uid)
	}
	return nil
}
