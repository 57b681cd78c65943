package main

import (
	"os"
	"path/filepath"
	"strings"
)

// loc is a turn's line in the notes.
type loc struct {
	Path string
	Line int
	Text string // the line as written
}

// writeNotes writes a conversation as daily notes under root/memory, as an
// assistant keeping notes of it would: one file per session date
// (memory/2023-05-08.md, sessions of one day in one file), one line per
// dialog turn ("Caroline: I went to a support group yesterday."), a
// shared photo's caption after it in brackets, a session's turns one
// paragraph (a blank line between sessions). It returns each turn's line.
func writeNotes(root string, c conversation) (map[string]loc, error) {
	mem := filepath.Join(root, "memory")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		return nil, err
	}
	lines := map[string]loc{}
	files := map[string]*strings.Builder{}
	count := map[string]int{}
	var order []string
	for _, s := range c.Sessions {
		day := s.Date.Format("2006-01-02")
		rel := "memory/" + day + ".md"
		b, ok := files[rel]
		if !ok {
			b = &strings.Builder{}
			files[rel] = b
			order = append(order, rel)
			b.WriteString("# " + day + "\n")
			count[rel] = 1
		}
		b.WriteString("\n")
		count[rel]++
		for _, t := range s.Turns {
			text := strings.Join(strings.Fields(t.Text), " ")
			if t.Caption != "" {
				text += " [photo: " + strings.Join(strings.Fields(t.Caption), " ") + "]"
			}
			line := t.Speaker + ": " + text
			b.WriteString(line + "\n")
			count[rel]++
			if t.DiaID != "" {
				lines[t.DiaID] = loc{rel, count[rel], line}
			}
		}
	}
	for _, rel := range order {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(files[rel].String()), 0o600); err != nil {
			return nil, err
		}
	}
	return lines, nil
}
