//go:build !linux && !darwin

package app

// downloadOrigin: no download marks are read on this system; every
// workspace file counts as the user's own.
func downloadOrigin(string) string { return "" }
