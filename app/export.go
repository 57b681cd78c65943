package app

// Exporting a conversation: the window formats the open transcript as
// Markdown or JSON (what it shows, in order) and the app writes it where
// the user chooses, as the audit export does. Exporting them all: the app
// reads the data dir's conversations database (app/backup, as `jarvis
// export` does).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"jarvis/app/backup"
)

// ConversationExport says where an export went.
type ConversationExport struct {
	Path      string `json:"path,omitempty"`
	Bytes     int    `json:"bytes"`
	Cancelled bool   `json:"cancelled,omitempty"`
	// Conversations is how many an export of them all holds.
	Conversations int `json:"conversations,omitempty"`
}

// maxExportBytes bounds an export: a conversation far larger is a mistake
// (or not a conversation), not something to write silently.
const maxExportBytes = 64 << 20

var safeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ExportConversation writes content, a conversation the window formatted as
// format ("md" or "json"), to a file the user picks. The file is the user's
// own (mode 0600), named after the session and the time.
func (a *App) ExportConversation(sessionID, format, content string) (ConversationExport, error) {
	switch format {
	case "md":
	case "json":
		if !json.Valid([]byte(content)) {
			return ConversationExport{}, errors.New("the JSON export is not valid JSON")
		}
	default:
		return ConversationExport{}, fmt.Errorf("unknown export format %q (use md or json)", format)
	}
	if len(content) > maxExportBytes {
		return ConversationExport{}, fmt.Errorf("the export is %d MB, more than the %d MB an export may be", len(content)>>20, maxExportBytes>>20)
	}
	id := safeName.ReplaceAllString(sessionID, "_")
	if len(id) > 40 {
		id = id[:40]
	}
	path, err := a.exportPath("conversation-" + id + "-" + time.Now().Format("20060102-150405") + "." + format)
	if err != nil || path == "" {
		return ConversationExport{Cancelled: err == nil}, err
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return ConversationExport{}, fmt.Errorf("export to %s: %w", path, err)
	}
	return ConversationExport{Path: path, Bytes: len(content)}, nil
}

// ExportAllConversations writes every conversation (deleted ones excepted)
// as Markdown ("md") or JSON to a file the user picks, mode 0600. It reads
// the conversations database of this window's data dir, never writing it.
func (a *App) ExportAllConversations(format string) (ConversationExport, error) {
	if format != "md" && format != "json" {
		return ConversationExport{}, fmt.Errorf("unknown export format %q (use md or json)", format)
	}
	if a.dataDir == "" {
		return ConversationExport{}, errors.New("this window has no data folder to export from")
	}
	path, err := a.exportPath("conversations-" + time.Now().Format("20060102-150405") + "." + format)
	if err != nil || path == "" {
		return ConversationExport{Cancelled: err == nil}, err
	}
	n, err := backup.Export(context.Background(), filepath.Join(a.dataDir, "jarvis.db"), format, path)
	if err != nil {
		return ConversationExport{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ConversationExport{}, err
	}
	return ConversationExport{Path: path, Bytes: int(fi.Size()), Conversations: n}, nil
}
