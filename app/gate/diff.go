package gate

// The diff a write_file prompt shows when the file exists: the user sees
// what changes, not only the new content in full.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Limits of the prompt's diff: past them it says why there is none, or
// shows the first lines of it.
const (
	diffMaxBytes   = 256 << 10 // either side; a larger file gets a note
	diffMaxLines   = 400       // lines shown
	diffContext    = 3         // unchanged lines kept around each change
	diffMaxLineLen = 2000      // characters of one shown line
)

// Diff is what a write would change in an existing file.
type Diff struct {
	// Lines in order: Op " " unchanged, "-" removed, "+" added, "…" a run
	// of unchanged lines left out (Text says how many).
	Lines   []DiffLine `json:"lines,omitempty"`
	Added   int        `json:"added"`
	Removed int        `json:"removed"`
	// Truncated: more changed lines than shown.
	Truncated bool `json:"truncated,omitempty"`
	// Note, when set, is why there is no line diff (binary or too large),
	// that the content is unchanged, or beside Lines that only the final
	// newline differs on the last line.
	Note string `json:"note,omitempty"`
}

// DiffLine is one line of a Diff.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// CurrentFile reads what is now at a workspace path: at most limit bytes
// and the full size; fs.ErrNotExist when there is nothing
// (tools.Executor.CurrentFile).
type CurrentFile func(path string, limit int64) ([]byte, int64, error)

// writeDiff is the diff of a write_file call against the file it would
// replace; nil when the file does not exist or cannot be read (the prompt
// then shows the content alone, as for a new file).
func writeDiff(current CurrentFile, args map[string]json.RawMessage) *Diff {
	var path, content string
	if json.Unmarshal(args["path"], &path) != nil || json.Unmarshal(args["content"], &content) != nil || path == "" {
		return nil
	}
	old, size, err := current(path, diffMaxBytes+1)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return nil
	}
	switch {
	case bytes.IndexByte(old, 0) >= 0 || !utf8.Valid(old):
		return &Diff{Note: fmt.Sprintf("The file exists and is binary (%s): it would be replaced whole.", byteSize(size))}
	case size > diffMaxBytes || len(content) > diffMaxBytes:
		return &Diff{Note: fmt.Sprintf("The file exists (%s); it or the new content is too large to compare line by line (over %s): it would be replaced whole.", byteSize(size), byteSize(diffMaxBytes))}
	case string(old) == content:
		return &Diff{Note: "The file already has exactly this content."}
	}
	return lineDiff(string(old), content)
}

// lineDiff compares two texts line by line (Myers' algorithm, from
// go-diff), keeping diffContext unchanged lines around each change.
func lineDiff(old, new string) *Diff {
	// A last line without its newline is the same line: compare with one,
	// and say so when only that differs.
	var note string
	if oldNL, newNL := strings.HasSuffix(old, "\n"), strings.HasSuffix(new, "\n"); oldNL != newNL && old != "" && new != "" {
		note = map[bool]string{true: "The new content has no newline at the end.", false: "The new content adds a newline at the end."}[oldNL]
	}
	if old != "" && !strings.HasSuffix(old, "\n") {
		old += "\n"
	}
	if new != "" && !strings.HasSuffix(new, "\n") {
		new += "\n"
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // inputs are bounded; the same files always give the same diff
	a, b, lines := dmp.DiffLinesToChars(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var all []DiffLine
	d := &Diff{Note: note}
	for _, x := range diffs {
		op := map[diffmatchpatch.Operation]string{diffmatchpatch.DiffEqual: " ", diffmatchpatch.DiffDelete: "-", diffmatchpatch.DiffInsert: "+"}[x.Type]
		for _, l := range splitLines(x.Text) {
			if r := []rune(l); len(r) > diffMaxLineLen {
				l = string(r[:diffMaxLineLen]) + "…"
			}
			all = append(all, DiffLine{Op: op, Text: l})
			switch op {
			case "-":
				d.Removed++
			case "+":
				d.Added++
			}
		}
	}
	// Keep the changes and diffContext lines around them; fold the rest.
	keep := make([]bool, len(all))
	for i, l := range all {
		if l.Op != " " {
			for j := max(i-diffContext, 0); j <= min(i+diffContext, len(all)-1); j++ {
				keep[j] = true
			}
		}
	}
	for i := 0; i < len(all); {
		if keep[i] {
			if len(d.Lines) == diffMaxLines {
				d.Truncated = true
				break
			}
			d.Lines = append(d.Lines, all[i])
			i++
			continue
		}
		j := i
		for j < len(all) && !keep[j] {
			j++
		}
		d.Lines = append(d.Lines, DiffLine{Op: "…", Text: fmt.Sprintf("%d unchanged %s", j-i, plural(j-i, "line", "lines"))})
		i = j
	}
	return d
}

// splitLines cuts text into its lines, without their newlines (a final
// newline does not make an empty last line).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// byteSize says a size in words a person reads at a glance.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}
