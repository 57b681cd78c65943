//go:build linux || darwin

package tools

import (
	"golang.org/x/sys/unix"
)

// DownloadOrigin is the address a file was downloaded from, as browsers
// record it in an extended attribute (freedesktop's user.xdg.origin.url,
// set by Chromium and Firefox; macOS's quarantine mark, which names no
// address), or "" when the file carries none.
func DownloadOrigin(path string) string {
	for _, attr := range []string{"user.xdg.origin.url", "user.xdg.referrer.url", "com.apple.quarantine"} {
		buf := make([]byte, 2048)
		n, err := unix.Getxattr(path, attr, buf)
		if err != nil || n <= 0 {
			continue
		}
		if attr == "com.apple.quarantine" {
			return "the internet (quarantined by macOS)"
		}
		return string(buf[:n])
	}
	return ""
}
