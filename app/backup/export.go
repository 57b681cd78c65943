package backup

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jarvis/app/audit"
)

// Conversation is one exported conversation (the JSON export's shape).
type Conversation struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	AgentID   string          `json:"agent_id"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
	Messages  []ExportMessage `json:"messages"`
}

// ExportMessage is one message of an exported conversation.
type ExportMessage struct {
	Role       string          `json:"role"` // user | assistant | tool | status
	Content    string          `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	CreatedAt  string          `json:"created_at"`
}

// Export writes every conversation (deleted ones excepted) of the
// conversation database at db to out as Markdown ("md") or JSON ("json")
// and returns how many. The database is read, never written, also while
// Jarvis runs; out is written whole or not at all (mode 0600).
func Export(ctx context.Context, db, format, out string) (int, error) {
	if format != "md" && format != "json" {
		return 0, fmt.Errorf("unknown export format %q (use md or json)", format)
	}
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("there are no conversations at %s", filepath.Dir(db))
	}
	d, err := sql.Open("sqlite3", audit.DSN(db, "mode=ro&_busy_timeout=10000"))
	if err != nil {
		return 0, err
	}
	defer d.Close()
	d.SetMaxOpenConns(1)
	// One read transaction: the export is one moment's conversations.
	tx, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	convs, err := conversations(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("reading the conversations: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".jarvis-export-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if format == "json" {
		err = writeJSON(w, convs)
	} else {
		err = writeMarkdown(w, convs)
	}
	if err := errors.Join(err, w.Flush(), tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return 0, err
	}
	return len(convs), os.Rename(tmp.Name(), out)
}

func conversations(ctx context.Context, tx *sql.Tx) ([]Conversation, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, agent_id, created_at, updated_at FROM sessions WHERE deleted_at IS NULL ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	var out []Conversation
	for rows.Next() {
		var c Conversation
		if err := rows.Scan(&c.ID, &c.Name, &c.AgentID, &c.CreatedAt, &c.UpdatedAt); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		mr, err := tx.QueryContext(ctx, `SELECT role, content, tool_calls, tool_call_id, created_at FROM messages WHERE session_id = ? ORDER BY id`, out[i].ID)
		if err != nil {
			return nil, err
		}
		for mr.Next() {
			var m ExportMessage
			var calls string
			if err := mr.Scan(&m.Role, &m.Content, &calls, &m.ToolCallID, &m.CreatedAt); err != nil {
				mr.Close()
				return nil, err
			}
			if calls != "" && json.Valid([]byte(calls)) {
				m.ToolCalls = json.RawMessage(calls)
			}
			out[i].Messages = append(out[i].Messages, m)
		}
		mr.Close()
		if err := mr.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func writeJSON(w io.Writer, convs []Conversation) error {
	if convs == nil {
		convs = []Conversation{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		ExportedAt    string         `json:"exported_at"`
		Conversations []Conversation `json:"conversations"`
	}{time.Now().UTC().Format(time.RFC3339), convs})
}

var roleTitle = map[string]string{"user": "You", "assistant": "Assistant", "tool": "Tool result", "status": "Status"}

func writeMarkdown(w io.Writer, convs []Conversation) error {
	fmt.Fprintf(w, "# Jarvis conversations\n\nExported %s: %d conversations.\n", time.Now().UTC().Format(time.RFC3339), len(convs))
	for _, c := range convs {
		name := c.Name
		if name == "" {
			name = "Conversation " + c.ID
		}
		fmt.Fprintf(w, "\n---\n\n## %s\n\nAgent `%s` · started %s · id `%s`\n", oneLine(name), c.AgentID, c.CreatedAt, c.ID)
		for _, m := range c.Messages {
			title := roleTitle[m.Role]
			if title == "" {
				title = m.Role
			}
			fmt.Fprintf(w, "\n### %s · %s\n\n", title, m.CreatedAt)
			if m.Content != "" {
				if m.Role == "tool" {
					fence := "```"
					for strings.Contains(m.Content, fence) {
						fence += "`"
					}
					fmt.Fprintf(w, "%s\n%s\n%s\n", fence, m.Content, fence)
				} else {
					fmt.Fprintf(w, "%s\n", m.Content)
				}
			}
			if len(m.ToolCalls) > 0 {
				fmt.Fprintf(w, "\nTool calls: `%s`\n", strings.ReplaceAll(string(m.ToolCalls), "`", "'"))
			}
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
