//go:build !linux

package confine

// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func LandlockABI() int { return 0 }

// SeccompAvailable reports whether the seccomp filter applies here.
func SeccompAvailable() bool { return false }

func restrictAndExec([]string, bool, string, []string, []string) error { return ErrUnsupported }
