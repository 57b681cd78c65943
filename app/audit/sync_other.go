//go:build !linux

package audit

import "os"

// datasync makes f's data durable (fsync; fdatasync is Linux's).
func datasync(f *os.File) error { return f.Sync() }
