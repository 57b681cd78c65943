package service

import (
	"encoding/json"
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

// FuzzSplitReason: the reason argument is always removed, other arguments kept.
func FuzzSplitReason(f *testing.F) {
	for _, s := range []string{`{}`, `{"reason":"x","path":"a"}`, `{"reason":5}`, `[]`, `null`, `{"a":{"reason":1}}`, `not json`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, _ := splitReason(s)
		var m map[string]json.RawMessage
		if json.Unmarshal(args, &m) == nil && m != nil {
			if _, ok := m["reason"]; ok {
				t.Fatalf("reason kept in %s", args)
			}
		}
	})
}
