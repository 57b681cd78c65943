//go:build sqlite_fts5

package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name, target, content string
		wantPath, wantFile    string
	}{
		{"long term creates titled file", "long_term", "User prefers tea.", "memory/MEMORY.md",
			"# Long-term memory\n\nUser prefers tea.\n"},
		{"daily uses the clock's date", "daily", "Standup at 9.\n\n", "memory/2026-02-11.md",
			"# 2026-02-11\n\nStandup at 9.\n"},
		{"crlf content normalised", "daily", "a\r\nb", "memory/2026-02-11.md",
			"# 2026-02-11\n\na\nb\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			s := openStore(t, root, nil)
			p, err := s.Write(context.Background(), tc.target, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			if p != tc.wantPath {
				t.Fatalf("path %q, want %q", p, tc.wantPath)
			}
			got, err := os.ReadFile(filepath.Join(root, p))
			if err != nil || string(got) != tc.wantFile {
				t.Fatalf("file %q (%v), want %q", got, err, tc.wantFile)
			}
		})
	}
}

func TestWriteAppendsAndKeepsLineEndings(t *testing.T) {
	tests := []struct {
		name, existing, want string
	}{
		{"lf with final break", "# Mine\n\nold\n", "# Mine\n\nold\n\nnew\nline\n"},
		{"lf without final break", "# Mine\n\nold", "# Mine\n\nold\n\nnew\nline\n"},
		{"already blank-line terminated", "old\n\n", "old\n\nnew\nline\n"},
		{"crlf file stays crlf", "# Mine\r\n\r\nold\r\n", "# Mine\r\n\r\nold\r\n\r\nnew\r\nline\r\n"},
		{"empty file gets title", "", "# Long-term memory\n\nnew\nline\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "memory/MEMORY.md", tc.existing)
			s := openStore(t, root, nil)
			if _, err := s.Write(context.Background(), "long_term", "new\nline"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(root, "memory/MEMORY.md"))
			if string(got) != tc.want {
				t.Fatalf("file %q, want %q", got, tc.want)
			}
			res := search(t, s, "new line", "")
			if len(res) != 1 {
				t.Fatalf("written entry not searchable: %+v", res)
			}
			checkResult(t, root, res[0])
		})
	}
}

func TestWriteErrors(t *testing.T) {
	root := t.TempDir()
	s := openStore(t, root, func(o *Options) { o.MaxWriteBytes = 100; o.MaxFileBytes = 250 })
	ctx := context.Background()
	tests := []struct {
		name, target, content string
		want                  error
	}{
		{"unknown target", "weekly", "x", ErrInvalidTarget},
		{"empty target", "", "x", ErrInvalidTarget},
		{"path as target", "../etc/passwd", "x", ErrInvalidTarget},
		{"empty content", "daily", "", ErrInvalidContent},
		{"blank content", "daily", " \n\t\r\n", ErrInvalidContent},
		{"NUL", "daily", "a\x00b", ErrInvalidContent},
		{"invalid utf8", "daily", "a\xffb", ErrInvalidContent},
		{"entry too large", "daily", strings.Repeat("x", 101), ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Write(ctx, tc.target, tc.content); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("file cap", func(t *testing.T) {
		var err error
		for i := 0; i < 10 && err == nil; i++ {
			_, err = s.Write(ctx, "long_term", strings.Repeat("y", 90))
		}
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge once the file reaches MaxFileBytes", err)
		}
		fi, _ := os.Stat(filepath.Join(root, "memory/MEMORY.md"))
		if fi.Size() > 250 {
			t.Fatalf("file grew to %d bytes past the cap", fi.Size())
		}
	})
	if _, err := os.Stat(filepath.Join(root, "memory/2026-02-11.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused write created the daily file: %v", err)
	}
}

func TestConcurrentWritesDoNotInterleave(t *testing.T) {
	root := t.TempDir()
	s := openStore(t, root, nil)
	const writers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body := fmt.Sprintf("begin w%d-%d\n%s\nend w%d-%d", w, i, strings.Repeat(fmt.Sprintf("payload-%d ", w), 200), w, i)
				if _, err := s.Write(context.Background(), "daily", body); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(root, "memory/2026-02-11.md"))
	entries := strings.Split(strings.TrimPrefix(string(data), "# 2026-02-11\n\n"), "\n\n")
	if len(entries) != writers*each {
		t.Fatalf("%d entries in file, want %d", len(entries), writers*each)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		var w, i int
		if _, err := fmt.Sscanf(e, "begin w%d-%d", &w, &i); err != nil {
			t.Fatalf("entry does not start cleanly: %.60q", e)
		}
		want := fmt.Sprintf("begin w%d-%d\n%s\nend w%d-%d\n", w, i, strings.Repeat(fmt.Sprintf("payload-%d ", w), 200), w, i)
		if e+"\n" != want && e != want {
			t.Fatalf("entry w%d-%d is interleaved or torn", w, i)
		}
		seen[e] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("duplicate entries: %d distinct", len(seen))
	}
}

// TestLineRanges checks, against the real file content, that every result's
// line range points at exactly the lines its excerpt shows, for the
// Markdown structures notes are made of.
func TestLineRanges(t *testing.T) {
	files := map[string]string{
		"memory/headings.md": "# Title\n\nIntro paragraph about walruses.\n\n## Section two\n\nText under section two mentions narwhals.\nSecond line.\n\n### Deep\nDeep text about belugas.\n",
		"memory/lists.md":    "Shopping:\n\n- apples\n- pears\n  - nested quinces\n\n1. first step\n2. second step with kumquats\n",
		"memory/code.md":     "Before the code.\n\n```go\nfunc main() {\n\n\tprintln(\"xylophone\")\n}\n```\n\nAfter the code mentions yodel.\n",
		"memory/crlf.md":     "# Windows note\r\n\r\nLine one\r\nLine two has marmalade\r\n\r\n- item with porcupine\r\n",
		"memory/unicode.md":  "# Заметки\n\nПривет мир, это тест.\n\n日本語の文章です。東京に行きました。\n\nCafé crème — naïve façade 🙂 emojis here.\n",
		"memory/long.md":     "short first line\n" + strings.Repeat("filler words here ", 100) + "needle in a long line " + strings.Repeat("more filler ", 100) + "\nlast\n",
		"memory/big.md":      bigSection(),
	}
	root := t.TempDir()
	for rel, content := range files {
		writeFile(t, root, rel, content)
	}
	s := openStore(t, root, nil)
	tests := []struct {
		q, path        string
		start, end     int // expected exact range; 0 = only check against the file
		excerptHasWord string
	}{
		{"walruses", "memory/headings.md", 1, 3, "walruses"},
		{"narwhals", "memory/headings.md", 5, 8, "narwhals"},
		{"belugas", "memory/headings.md", 10, 11, "belugas"},
		{"quinces", "memory/lists.md", 3, 5, "quinces"},
		{"kumquats", "memory/lists.md", 7, 8, "kumquats"},
		{"xylophone", "memory/code.md", 3, 8, "xylophone"},
		{"yodel", "memory/code.md", 10, 10, "yodel"},
		{"marmalade", "memory/crlf.md", 1, 4, "marmalade"},
		{"porcupine", "memory/crlf.md", 6, 6, "porcupine"},
		{"мир", "memory/unicode.md", 1, 3, "мир"},
		{"東京に行きました", "memory/unicode.md", 5, 5, "東京"},
		{"emojis", "memory/unicode.md", 7, 7, "emojis"},
		{"needle", "memory/long.md", 2, 2, "needle"},
		{"target42", "memory/big.md", 0, 0, "target42"},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			res := search(t, s, tc.q, "")
			if len(res) == 0 || res[0].Path != tc.path {
				t.Fatalf("got %+v, want a hit in %s", res, tc.path)
			}
			r := res[0]
			checkResult(t, root, r)
			if tc.start != 0 && (r.LineStart != tc.start || r.LineEnd != tc.end) {
				t.Fatalf("range %d-%d, want %d-%d (excerpt %q)", r.LineStart, r.LineEnd, tc.start, tc.end, r.Excerpt)
			}
			if !strings.Contains(strings.ToLower(r.Excerpt), tc.excerptHasWord) {
				t.Fatalf("excerpt %q does not show %q", r.Excerpt, tc.excerptHasWord)
			}
			// Get returns the same lines.
			g, err := s.Get(context.Background(), r.Path, r.LineStart, r.LineEnd)
			if err != nil {
				t.Fatal(err)
			}
			if r.LineStart != r.LineEnd || !strings.HasPrefix(r.Excerpt, "…") && !strings.HasSuffix(r.Excerpt, "…") {
				if g.Text != r.Excerpt {
					t.Fatalf("Get %q != excerpt %q", g.Text, r.Excerpt)
				}
			}
		})
	}
}

// bigSection is one 120-line list (split into several chunks) with a word
// deep inside, so the excerpt is a window, not the whole chunk.
func bigSection() string {
	var b strings.Builder
	b.WriteString("# Big\n")
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&b, "- item %d filler\n", i)
		if i == 75 {
			b.WriteString("- the target42 item\n")
		}
	}
	return b.String()
}

func TestGet(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/notes.md", "one\r\ntwo\r\nthree\r\n")
	writeFile(t, root, "memory/empty.md", "")
	s := openStore(t, root, nil)
	ctx := context.Background()
	tests := []struct {
		path       string
		start, end int
		want       Range
		err        error
	}{
		{"memory/notes.md", 2, 3, Range{Path: "memory/notes.md", LineStart: 2, LineEnd: 3, Text: "two\nthree", TotalLines: 3}, nil},
		{"memory/notes.md", 0, 0, Range{Path: "memory/notes.md", LineStart: 1, LineEnd: 3, Text: "one\ntwo\nthree", TotalLines: 3}, nil},
		{"memory/notes.md", 3, 99, Range{Path: "memory/notes.md", LineStart: 3, LineEnd: 3, Text: "three", TotalLines: 3}, nil},
		{"memory//./notes.md", 1, 1, Range{Path: "memory/notes.md", LineStart: 1, LineEnd: 1, Text: "one", TotalLines: 3}, nil},
		{"memory/empty.md", 0, 0, Range{Path: "memory/empty.md"}, nil},
		{"memory/notes.md", 4, 5, Range{}, ErrInvalidRange},
		{"memory/notes.md", 3, 2, Range{}, ErrInvalidRange},
		{"memory/missing.md", 1, 1, Range{}, ErrNotFound},
		{"memory/../secret.md", 1, 1, Range{}, ErrInvalidPath},
		{"/etc/passwd", 1, 1, Range{}, ErrInvalidPath},
		{"memory/notes.txt", 1, 1, Range{}, ErrInvalidPath},
		{"other/notes.md", 1, 1, Range{}, ErrInvalidPath},
		{"memory/.hidden.md", 1, 1, Range{}, ErrInvalidPath},
		{"", 1, 1, Range{}, ErrInvalidPath},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d-%d", tc.path, tc.start, tc.end), func(t *testing.T) {
			got, err := s.Get(ctx, tc.path, tc.start, tc.end)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSymlinksLeavingTheWorkspace(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("the password is hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "MEMORY.md"), []byte("outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "memory/inside.md", "inside note about hunter2 too\n")
	mem := filepath.Join(root, "memory")
	for _, l := range []struct{ target, name string }{
		{filepath.Join(outside, "secret.md"), "leak.md"},
		{outside, "linkdir"},
		{filepath.Join(outside, "MEMORY.md"), "MEMORY.md"},
		{"inside.md", "alias.md"},
	} {
		if err := os.Symlink(l.target, filepath.Join(mem, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, root, nil)
	ctx := context.Background()
	res := search(t, s, "hunter2", "")
	for _, r := range res {
		if r.Path == "memory/leak.md" || strings.HasPrefix(r.Path, "memory/linkdir/") {
			t.Fatalf("a symlink leading outside was indexed: %+v", r)
		}
	}
	// inside.md and its alias have the same text, so they collapse into one.
	if len(res) != 1 || !hasPath(res, "memory/inside.md") && !hasPath(res, "memory/alias.md") {
		t.Fatalf("files inside the workspace (and links to them) should be found: %+v", res)
	}
	if g, err := s.Get(ctx, "memory/alias.md", 0, 0); err != nil || g.Text != "inside note about hunter2 too" {
		t.Fatalf("Get through a symlink inside the workspace: %+v, %v", g, err)
	}
	for _, p := range []string{"memory/leak.md", "memory/linkdir/secret.md", "memory/MEMORY.md"} {
		if _, err := s.Get(ctx, p, 0, 0); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Get(%s) err = %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := s.Write(ctx, "long_term", "x"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("Write through an outside symlink: err = %v, want ErrInvalidPath", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "MEMORY.md")); string(b) != "outside\n" {
		t.Fatalf("file outside the workspace was modified: %q", b)
	}
}

func TestExternalEditsAreSearchable(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/existing.md", "# Existing\n\noriginal content\n")
	s := openStore(t, root, nil)
	mem := filepath.Join(root, "memory")
	const within = time.Second
	visible := func(q, path string) func() bool {
		return func() bool { return hasPath(search(t, s, q, ""), path) }
	}
	gone := func(q, path string) func() bool {
		return func() bool { return !hasPath(search(t, s, q, ""), path) }
	}

	t.Run("create", func(t *testing.T) {
		writeFile(t, root, "memory/new.md", "freshly created aardvark\n")
		waitFor(t, within, "new file searchable", visible("aardvark", "memory/new.md"))
	})
	t.Run("edit in place", func(t *testing.T) {
		f, err := os.OpenFile(filepath.Join(mem, "existing.md"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\nappended by an editor: bandicoot\n")
		f.Close()
		waitFor(t, within, "appended text searchable", visible("bandicoot", "memory/existing.md"))
		res := search(t, s, "bandicoot", "")
		checkResult(t, root, res[0])
	})
	t.Run("write temp then rename over", func(t *testing.T) {
		tmp := filepath.Join(mem, ".existing.md.swp")
		if err := os.WriteFile(tmp, []byte("# Existing\n\nrewritten with capybara\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mem, "existing.md")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, within, "renamed-over content searchable", visible("capybara", "memory/existing.md"))
		waitFor(t, within, "old content gone", gone("bandicoot", "memory/existing.md"))
	})
	t.Run("rename away", func(t *testing.T) {
		if err := os.Rename(filepath.Join(mem, "new.md"), filepath.Join(mem, "renamed.md")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, within, "rename reflected", func() bool {
			res := search(t, s, "aardvark", "")
			return hasPath(res, "memory/renamed.md") && !hasPath(res, "memory/new.md")
		})
	})
	t.Run("delete", func(t *testing.T) {
		if err := os.Remove(filepath.Join(mem, "renamed.md")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, within, "deleted file gone", gone("aardvark", "memory/renamed.md"))
	})
	t.Run("new folder", func(t *testing.T) {
		writeFile(t, root, "memory/projects/alpha/plan.md", "project dromedary plan\n")
		waitFor(t, within, "file in new folder searchable", visible("dromedary", "memory/projects/alpha/plan.md"))
		writeFile(t, root, "memory/projects/alpha/later.md", "later echidna\n")
		waitFor(t, within, "later file in new folder searchable", visible("echidna", "memory/projects/alpha/later.md"))
	})
	t.Run("folder removed", func(t *testing.T) {
		if err := os.RemoveAll(filepath.Join(mem, "projects")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, within, "removed folder's files gone", gone("dromedary", "memory/projects/alpha/plan.md"))
	})
	t.Run("non-markdown ignored", func(t *testing.T) {
		writeFile(t, root, "memory/notes.txt", "flamingo\n")
		writeFile(t, root, "memory/flag.md", "flamingo marker\n")
		waitFor(t, within, "marker searchable", visible("flamingo", "memory/flag.md"))
		if res := search(t, s, "flamingo", ""); len(res) != 1 {
			t.Fatalf("non-.md file indexed: %+v", res)
		}
	})
}

func TestChangesWhileStoppedAreReconciled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/keep.md", "stays the same: gazelle\n")
	writeFile(t, root, "memory/edit.md", "before: hyena\n")
	writeFile(t, root, "memory/drop.md", "to be deleted: ibis\n")
	s := openStore(t, root, nil)
	for _, q := range []string{"gazelle", "hyena", "ibis"} {
		if len(search(t, s, q, "")) != 1 {
			t.Fatalf("%s not indexed", q)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	writeFile(t, root, "memory/edit.md", "after: jackal\n")
	os.Remove(filepath.Join(root, "memory/drop.md"))
	writeFile(t, root, "memory/2026-02-01.md", "added while stopped: koala\n")
	// Same size and mtime as before, different bytes: only the hash sees it,
	// because the file was indexed within the racy window of its mtime.
	old, _ := os.Stat(filepath.Join(root, "memory/keep.md"))
	writeFile(t, root, "memory/keep.md", "stays the same: gazebo!\n")
	os.Chtimes(filepath.Join(root, "memory/keep.md"), old.ModTime(), old.ModTime())

	s = openStore(t, root, func(o *Options) { o.DisableWatcher = true })
	for _, tc := range []struct {
		q    string
		want int
	}{{"hyena", 0}, {"jackal", 1}, {"ibis", 0}, {"koala", 1}, {"gazelle", 0}, {"gazebo", 1}} {
		if got := len(search(t, s, tc.q, "")); got != tc.want {
			t.Errorf("%s: %d results after reopen, want %d", tc.q, got, tc.want)
		}
	}
}

func TestIndexIsRebuiltWhenBroken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(path string) error
	}{
		{"deleted", func(p string) error { return os.Remove(p) }},
		{"garbage", func(p string) error {
			os.Remove(p + "-wal")
			os.Remove(p + "-shm")
			return os.WriteFile(p, []byte(strings.Repeat("not a database ", 1000)), 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "memory/MEMORY.md", "remember the lemur\n")
			s := openStore(t, root, nil)
			s.Close()
			if err := tc.break_(filepath.Join(root, "memory-index.db")); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, root, nil)
			if len(search(t, s, "lemur", "")) != 1 {
				t.Fatal("index not rebuilt")
			}
		})
	}
}

func TestOneStorePerIndex(t *testing.T) {
	root := t.TempDir()
	openStore(t, root, nil)
	if _, err := Open(context.Background(), Options{Root: root}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
}

func TestClosedStore(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	if _, err := s.Write(ctx, "daily", "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Write: %v", err)
	}
	if _, err := s.Search(ctx, "x", "", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Search: %v", err)
	}
	if _, err := s.Get(ctx, "memory/MEMORY.md", 1, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Get: %v", err)
	}
}

func TestPromptContext(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/MEMORY.md", "# Long-term memory\n\nName: Ada.\n"+strings.Repeat("long-term fact line\n", 200))
	writeFile(t, root, "memory/2026-02-11.md", "# 2026-02-11\n\n"+strings.Repeat("early today\n", 100)+"latest today entry\n")
	writeFile(t, root, "memory/2026-02-10.md", "# 2026-02-10\n\nyesterday entry\n")
	writeFile(t, root, "memory/2026-02-09.md", "# 2026-02-09\n\ntwo days ago entry\n")
	s := openStore(t, root, nil)

	full := s.PromptContext(1 << 20)
	for _, want := range []string{"(memory/MEMORY.md)", "Name: Ada.", "yesterday entry", "latest today entry"} {
		if !strings.Contains(full, want) {
			t.Errorf("full context lacks %q", want)
		}
	}
	if strings.Contains(full, "two days ago") {
		t.Error("context includes a note older than yesterday")
	}
	if strings.Index(full, "2026-02-10") > strings.Index(full, "Daily notes 2026-02-11") {
		t.Error("yesterday should come before today")
	}

	for _, max := range []int{300, 1000, 2500} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			got := s.PromptContext(max)
			if len(got) > max {
				t.Fatalf("%d bytes, cap %d", len(got), max)
			}
			if !strings.Contains(got, "yesterday entry") {
				t.Errorf("small section dropped: %q", got)
			}
			if max >= 1000 && (!strings.Contains(got, "Name: Ada.") || !strings.Contains(got, "latest today entry")) {
				t.Errorf("cut should keep MEMORY.md's head and today's tail: %q", got)
			}
		})
	}
	if got := openStore(t, t.TempDir(), nil).PromptContext(0); got != "" {
		t.Fatalf("empty workspace gave %q", got)
	}
}

// PromptContext keeps its last result while the files stay the same ones;
// any change to them shows at the next call.
func TestPromptContextFollowsFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/MEMORY.md", "Name: Ada.\n")
	s := openStore(t, root, nil)
	if got := s.PromptContext(0); !strings.Contains(got, "Name: Ada.") {
		t.Fatalf("context %q", got)
	}
	path := filepath.Join(root, "memory", "MEMORY.md")
	stamp := time.Now().Add(-time.Hour)
	step := func(what, want, not string, change func()) {
		t.Helper()
		change()
		got := s.PromptContext(0)
		if want != "" && !strings.Contains(got, want) || not != "" && strings.Contains(got, not) {
			t.Fatalf("after %s: context %q (want %q, not %q)", what, got, want, not)
		}
	}
	step("an edit in place, same size, mtime set back", "Name: Eve.", "Ada", func() {
		os.WriteFile(path, []byte("Name: Eve.\n"), 0o600)
		os.Chtimes(path, stamp, stamp)
	})
	step("a new file renamed over it, same size and mtime", "Name: Bob.", "Eve", func() {
		tmp := filepath.Join(root, "memory", "tmp")
		os.WriteFile(tmp, []byte("Name: Bob.\n"), 0o600)
		os.Chtimes(tmp, stamp, stamp)
		os.Rename(tmp, path)
	})
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("Name: Mallory.\n"), 0o600)
	step("a symlink out of the workspace in its place", "", "Mallory", func() {
		os.Remove(path)
		os.Symlink(outside, path)
	})
	step("its removal", "", "Name:", func() { os.Remove(path) })
	today := filepath.Join(root, "memory", fixedNow.Format("2006-01-02")+".md")
	step("a daily note", "met Carol", "", func() { os.WriteFile(today, []byte("met Carol\n"), 0o600) })
}
