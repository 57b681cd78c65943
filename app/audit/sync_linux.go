package audit

import (
	"os"
	"syscall"
)

// datasync makes f's data durable without its times (fdatasync): what
// the anchor and the log's write-ahead file need.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
