package service

import (
	"regexp"
	"testing"
)

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// FuzzValidateSessionID: an accepted id is always URL- and path-safe.
func FuzzValidateSessionID(f *testing.F) {
	for _, s := range []string{"EXTERNAL-123", " a ", "", "../x", "a/b", "ü", "a\x00b", "%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ValidateSessionID(s)
		if err == nil && !validID.MatchString(id) {
			t.Fatalf("accepted %q as %q", s, id)
		}
	})
}
