//go:build !linux && !darwin

package tools

// DownloadOrigin: no download marks are read on this system; every
// workspace file counts as the user's own.
func DownloadOrigin(string) string { return "" }
