//go:build !sqlite_fts5

package memory

import (
	"context"
	"errors"
	"testing"
)

// Without -tags sqlite_fts5 the package still compiles, and Open says what
// is missing instead of failing obscurely. (The other store tests need FTS5
// and carry the tag.)
func TestOpenWithoutFTS5(t *testing.T) {
	_, err := Open(context.Background(), Options{Root: t.TempDir()})
	if !errors.Is(err, errNoFTS5) {
		t.Fatalf("err = %v, want errNoFTS5", err)
	}
}
