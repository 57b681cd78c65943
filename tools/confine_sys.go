package tools

import "jarvis/tools/confine"

// The kernel mechanisms the helper (package confine) applies.
func landlockABI() int       { return confine.LandlockABI() }
func seccompAvailable() bool { return confine.SeccompAvailable() }
