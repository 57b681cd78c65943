package chatrt

import (
	"encoding/json"
	"testing"
)

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
