package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/tools"
)

// A write_file prompt for a file that exists shows what would change: a
// line diff with the unchanged stretches folded, or a note for a binary,
// huge or identical file; a new file has no diff. The file is read through
// the real executor (inside the workspace), and the call is still only run
// when the user allows it.
func TestWritePromptDiff(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	g, err := New(Options{Assessor: f.x, Prompter: f.prompter, Audit: f.log, CurrentFile: f.x.CurrentFile})
	if err != nil {
		t.Fatal(err)
	}
	f.gate = g
	put := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(f.ws, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var ten []string
	for i := 1; i <= 10; i++ {
		ten = append(ten, fmt.Sprintf("line %d", i))
	}
	put("notes.txt", []byte(strings.Join(ten, "\n")+"\n"))
	put("blob.bin", []byte{0x7f, 'E', 'L', 'F', 0, 1, 2})
	put("big.txt", []byte(strings.Repeat("x\n", 200<<10)))
	put("same.txt", []byte("same\n"))

	prompt := func(path, content string) Prompt {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		ch := f.handle(context.Background(), req("write_file", string(args), tools.Risky))
		p := f.answer(Answer{Choice: Refuse})
		if o := wait(t, ch); o.OK {
			t.Fatalf("%s: ran though denied", path)
		}
		return p
	}

	changed := append([]string(nil), ten...)
	changed[4] = "line five"
	p := prompt("notes.txt", strings.Join(changed, "\n")+"\n")
	if p.Diff == nil || p.Diff.Added != 1 || p.Diff.Removed != 1 || p.Diff.Truncated || p.Diff.Note != "" {
		t.Fatalf("diff %+v", p.Diff)
	}
	var got []string
	for _, l := range p.Diff.Lines {
		got = append(got, l.Op+l.Text)
	}
	want := []string{"…1 unchanged line", " line 2", " line 3", " line 4", "-line 5", "+line five", " line 6", " line 7", " line 8", "…2 unchanged lines"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines\n got %q\nwant %q", got, want)
	}
	// The window gets it as the prompt's "diff".
	raw, _ := json.Marshal(p)
	if !strings.Contains(string(raw), `"diff":{"lines":[{"op":"…","text":"1 unchanged line"}`) {
		t.Fatalf("json %s", raw)
	}

	if p := prompt("new.txt", "fresh\n"); p.Diff != nil {
		t.Fatalf("a new file has a diff: %+v", p.Diff)
	}
	if p := prompt("blob.bin", "text now"); p.Diff == nil || !strings.Contains(p.Diff.Note, "binary (7 bytes)") || len(p.Diff.Lines) != 0 {
		t.Fatalf("binary: %+v", p.Diff)
	}
	if p := prompt("big.txt", "short"); p.Diff == nil || !strings.Contains(p.Diff.Note, "too large") || !strings.Contains(p.Diff.Note, "400.0 KB") {
		t.Fatalf("big: %+v", p.Diff)
	}
	if p := prompt("same.txt", "same\n"); p.Diff == nil || p.Diff.Note != "The file already has exactly this content." {
		t.Fatalf("same: %+v", p.Diff)
	}
	// Rewriting every line of a long file: the diff shows its first lines and says it stops.
	var long, other []string
	for i := 0; i < 1000; i++ {
		long, other = append(long, fmt.Sprintf("a%d", i)), append(other, fmt.Sprintf("b%d", i))
	}
	put("long.txt", []byte(strings.Join(long, "\n")))
	if p := prompt("long.txt", strings.Join(other, "\n")); p.Diff == nil || !p.Diff.Truncated || len(p.Diff.Lines) != diffMaxLines || p.Diff.Added != 1000 || p.Diff.Removed != 1000 {
		t.Fatalf("long: truncated %v, %d lines, +%d -%d", p.Diff.Truncated, len(p.Diff.Lines), p.Diff.Added, p.Diff.Removed)
	}
	// A last line without its newline is not shown as changed; the note says what happens to the newline.
	put("nonl.txt", []byte("hello"))
	if p := prompt("nonl.txt", "hello\nsecond line\n"); p.Diff == nil || p.Diff.Added != 1 || p.Diff.Removed != 0 || p.Diff.Note != "The new content adds a newline at the end." ||
		len(p.Diff.Lines) != 2 || p.Diff.Lines[0] != (DiffLine{Op: " ", Text: "hello"}) || p.Diff.Lines[1] != (DiffLine{Op: "+", Text: "second line"}) {
		t.Fatalf("no newline: %+v", p.Diff)
	}
	if len(f.executed()) != 0 {
		t.Fatalf("denied calls ran: %v", f.executed())
	}
}
