package store

import (
	"context"
	"database/sql"
	"encoding/json"
)

// Message is one transcript entry.
type Message struct {
	ID         int64
	SessionID  string
	TurnID     string
	Role       string // user | assistant | tool | status
	Content    string
	ToolCalls  string // JSON array of the assistant's tool calls, or ""
	ToolCallID string // for role tool
	Meta       string // JSON object with extra data, or ""
	CreatedAt  string
}

// AddMessage appends a message and returns it with its id and time.
func (s *Store) AddMessage(ctx context.Context, m Message) (Message, error) {
	m.CreatedAt = s.ts()
	err := s.addMessage(ctx, nil, &m)
	return m, err
}

// AppendMessage returns the write that appends m (its time set as it is
// written), for a transaction that stores more than the message.
func (s *Store) AppendMessage(m *Message) Write {
	return func(ctx context.Context, tx *sql.Tx) error {
		m.CreatedAt = s.ts()
		return s.addMessage(ctx, tx, m)
	}
}

// EndLineMeta is the meta of the status line that records how a turn that
// did not answer ended: "stopped" (the user stopped it) or "error", with
// the error's code. The model is never sent status lines.
func EndLineMeta(code string) string {
	kind := "error"
	if code == "cancelled" {
		kind = "stopped"
	}
	b, _ := json.Marshal(map[string]string{"kind": kind, "code": code})
	return string(b)
}

// execer is what both *sql.DB and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const insertMessageSQL = `INSERT INTO messages(session_id, turn_id, role, content, tool_calls, tool_call_id, meta, created_at) VALUES (?,?,?,?,?,?,?,?)`

// stmt returns a prepared statement of the writer, bound to tx when not nil.
func stmt(ctx context.Context, tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	if tx == nil {
		return st
	}
	return tx.StmtContext(ctx, st)
}

// addMessage inserts m (in tx when not nil) and sets its id.
func (s *Store) addMessage(ctx context.Context, tx *sql.Tx, m *Message) error {
	res, err := stmt(ctx, tx, s.insertMessage).ExecContext(ctx,
		m.SessionID, m.TurnID, m.Role, m.Content, m.ToolCalls, m.ToolCallID, m.Meta, m.CreatedAt)
	if err != nil {
		return err
	}
	m.ID, err = res.LastInsertId()
	return err
}

// Messages returns a session's transcript in order: its shown branch
// (branches.go).
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	return s.MessagesAfter(ctx, sessionID, 0)
}

// MessagesAfter returns the messages of a session's shown branch after the
// one with id after, in order: a request's history from its latest summary
// on reads only these.
func (s *Store) MessagesAfter(ctx context.Context, sessionID string, after int64) ([]Message, error) {
	rows, err := s.selectMessages.QueryContext(ctx, sessionID, after)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		if err := rows.Scan(&m.ID, &m.SessionID, &m.TurnID, &m.Role, &m.Content, &m.ToolCalls, &m.ToolCallID, &m.Meta, &m.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
