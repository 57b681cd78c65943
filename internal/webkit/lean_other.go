//go:build !(desktop && linux)

package webkit

// Lean does nothing outside the Linux desktop build.
func Lean() bool { return false }
