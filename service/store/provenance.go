package store

import "context"

// UntrustedMetas returns the meta of a session's messages up to id upto
// that record untrusted sources (service/provenance), oldest first: what a
// compaction summary up to that message stands for.
func (s *Store) UntrustedMetas(ctx context.Context, sessionID string, upto int64) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT meta FROM messages WHERE session_id = ? AND id <= ? AND meta LIKE '%"untrusted"%' ORDER BY id`, sessionID, upto)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
