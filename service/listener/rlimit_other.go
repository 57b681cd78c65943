//go:build !unix

package listener

// openFilesLimit: Windows has no per-process descriptor limit of that kind.
func openFilesLimit() uint64 { return 1 << 16 }
