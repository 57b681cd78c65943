package memory

import (
	"context"
	"database/sql"
	"encoding/json"
)

// The index keeps how many chunks hold each token (chunk_terms, index.go),
// for jarvis_rank's idf (rank.go). A file's re-index deletes its chunks
// and inserts them again, so its tokens are counted out and in, and only
// the difference is written: appending to a note changes the counts of
// the new lines' words, not of every word the note holds. The tokens are
// the index's own (jarvis_terms, rank.go). A fresh build sets the table
// from the full-text index's counts instead (fillChunkTerms).

// termDelta is the change to each token's count of chunks within one
// transaction.
type termDelta map[string]int64

// countOut subtracts the tokens of the chunks of the files the condition
// names (a WHERE clause on chunks c, with its arguments), before they are
// deleted.
func (d termDelta) countOut(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	return d.add(ctx, tx, -1, `SELECT j.value, count(*) FROM chunks c, json_each(jarvis_terms(c.text)) j WHERE `+where+` GROUP BY j.value`, args...)
}

// countIn adds the tokens of texts, chunks about to be inserted.
func (d termDelta) countIn(ctx context.Context, tx *sql.Tx, texts []string) error {
	if len(texts) == 0 {
		return nil
	}
	b, err := json.Marshal(texts)
	if err != nil {
		return err
	}
	return d.add(ctx, tx, 1, `SELECT j.value, count(*) FROM json_each(?) c, json_each(jarvis_terms(c.value)) j GROUP BY j.value`, string(b))
}

func (d termDelta) add(ctx context.Context, tx *sql.Tx, sign int64, q string, args ...any) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return err
		}
		d[t] += sign * n
	}
	return rows.Err()
}

// write applies the changes that are not zero. A token no chunk holds any
// more keeps its row at 0.
func (d termDelta) write(ctx context.Context, tx *sql.Tx) error {
	var st *sql.Stmt
	for t, n := range d {
		if n == 0 {
			continue
		}
		if st == nil {
			var err error
			if st, err = tx.PrepareContext(ctx, `INSERT INTO chunk_terms(term, docs) VALUES (?, ?)
				ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs`); err != nil {
				return err
			}
			defer st.Close()
		}
		if _, err := st.ExecContext(ctx, t, n); err != nil {
			return err
		}
	}
	return nil
}

// fillChunkTerms sets chunk_terms from the full-text index's own counts,
// after a fresh build that did not count.
func fillChunkTerms(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunk_terms`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO chunk_terms(term, docs) SELECT term, doc FROM chunks_vocab`)
	return err
}
