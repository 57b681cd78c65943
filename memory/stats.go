package memory

import (
	"context"
	"fmt"
)

// Stats is what the index holds.
type Stats struct {
	Files  int `json:"files"`
	Chunks int `json:"chunks"`
}

// Stats counts the files and chunks in the index.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	if s.closed() {
		return st, ErrClosed
	}
	err := s.rdb.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks)`).Scan(&st.Files, &st.Chunks)
	if err != nil {
		return st, fmt.Errorf("memory: stats: %w", err)
	}
	return st, nil
}
