package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// plainBM25 is the baseline: every note line in an FTS5 table (Porter
// stems), the question's words joined by OR, ranked by FTS5's bm25(); no
// stop words, synonyms, chunks or re-ranking.
type plainBM25 struct{ db *sql.DB }

func newPlainBM25(ctx context.Context, lines map[string]loc) (*plainBM25, error) {
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one in-memory database
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE lines USING fts5(text, path UNINDEXED, line UNINDEXED, tokenize='porter unicode61')`); err != nil {
		db.Close()
		return nil, fmt.Errorf("plain BM25 (needs -tags sqlite_fts5): %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	for _, l := range lines {
		if _, err := tx.ExecContext(ctx, `INSERT INTO lines(text, path, line) VALUES (?, ?, ?)`, l.Text, l.Path, l.Line); err != nil {
			tx.Rollback()
			db.Close()
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		db.Close()
		return nil, err
	}
	return &plainBM25{db}, nil
}

// search returns the top n lines for q.
func (b *plainBM25) search(ctx context.Context, q string, n int) ([]span, error) {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, nil
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	rows, err := b.db.QueryContext(ctx, `SELECT path, line FROM lines WHERE lines MATCH ? ORDER BY bm25(lines) LIMIT ?`, strings.Join(words, " OR "), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []span
	for rows.Next() {
		var s span
		if err := rows.Scan(&s.Path, &s.Start); err != nil {
			return nil, err
		}
		s.End = s.Start
		out = append(out, s)
	}
	return out, rows.Err()
}

func (b *plainBM25) close() { b.db.Close() }
