package tools

// The file tools that change the workspace beyond write_file: edit_file,
// make_dir, move_path and delete_path, and the read-only search_files.
// Every one resolves its paths like the other file tools (workspace.go) and
// runs through the workspace's os.Root. A call that changes files lists the
// workspace-relative paths it changes in call.touches (Executor.Changes), so
// the desktop can checkpoint them before it runs.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Prepared is a validated call, ready to run: what Execute does in two
// steps, so that a caller can look at what the call will change (Changes)
// before it runs, without decoding its arguments twice.
type Prepared struct {
	name string
	c    *call
}

// Prepare validates a call like Execute, without running it.
func (e *Executor) Prepare(name string, args json.RawMessage) (*Prepared, error) {
	c, err := e.prepare(name, args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Prepared{name: name, c: c}, nil
}

// Changes returns the workspace-relative paths (slash-separated, canonical)
// the call changes, in the order it changes them; nil for a call that
// changes no file.
func (p *Prepared) Changes() []string {
	var out []string
	for _, t := range p.c.touches {
		out = append(out, display(t))
	}
	return out
}

// Replaces reports whether the call replaces each existing file it changes
// by a new one (atomicWrite: written beside it, renamed over it), never
// writing into the old file: write_file and edit_file. A checkpoint can
// then keep the old file's inode instead of a copy of its bytes.
func (p *Prepared) Replaces() bool { return p.name == "write_file" || p.name == "edit_file" }

// Run runs the call; errors wrap the sentinels, as Execute's do.
func (p *Prepared) Run(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", p.name, err)
	}
	out, err := p.c.run(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.name, err)
	}
	return out, nil
}

// changeTarget resolves a path a changing tool acts on: inside the
// workspace, not the workspace folder itself.
func (e *Executor) changeTarget(field string, v *string) (string, error) {
	p, err := required(field, v)
	if err != nil {
		return "", err
	}
	rel, err := e.ws.resolve(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%w: %s names the workspace folder itself", ErrBadArguments, field)
	}
	return rel, nil
}

// leafTarget is changeTarget for a tool that acts on the entry itself
// (move, delete): the folder part is resolved, the last element is kept, so
// a symlink is moved or deleted rather than what it points to.
func (e *Executor) leafTarget(field string, v *string) (string, error) {
	p, err := required(field, v)
	if err != nil {
		return "", err
	}
	rel, err := e.ws.lexical(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%w: %s names the workspace folder itself", ErrBadArguments, field)
	}
	dir, err := e.ws.resolve(filepath.Dir(rel))
	if err != nil {
		return "", err
	}
	rel = filepath.Join(dir, filepath.Base(rel))
	// The entry itself, what a symlink at it leads to, and everything it
	// would take along: a protected folder beneath it.
	if err := e.ws.guard(p, rel); err != nil {
		return "", err
	}
	if _, err := e.ws.resolve(p); errors.Is(err, ErrNotAllowed) {
		return "", err
	}
	if e.ws.protected.Ancestor(e.ws.abs(rel)) {
		return "", fmt.Errorf("%w: %q holds Jarvis's own files or folders (its settings, data, keys, trash or checkpoints); the file tools never move or delete them", ErrNotAllowed, p)
	}
	return rel, nil
}

// readText reads a regular text file of at most max bytes through the root.
func (e *Executor) readText(rel string, max int) ([]byte, fs.FileMode, error) {
	f, fi, err := e.openRegular(rel)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if fi.Size() > int64(max) {
		return nil, 0, fmt.Errorf("%w: %s is %d bytes, the limit for editing is %d", ErrBadArguments, display(rel), fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, 0, err
	}
	if isBinary(b) {
		return nil, 0, fmt.Errorf("%w: %s is a binary file; the text tools do not change binary files", ErrBadArguments, display(rel))
	}
	return b, fi.Mode().Perm(), nil
}

// isBinary is the text tools' test: a NUL byte in the first 8 KiB, the way
// git and grep tell binary from text.
func isBinary(b []byte) bool {
	if len(b) > 8<<10 {
		b = b[:8<<10]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// atomicWrite writes data to rel through a temporary file beside it and a
// rename, so a reader (or a crash) sees the old file or the new one, never
// half of one.
func (e *Executor) atomicWrite(rel string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := e.ws.root.MkdirAll(dir, 0o755); err != nil {
			return rootErr(err)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(rel)+".jarvis-"+hex.EncodeToString(rnd[:]))
	f, err := e.ws.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return rootErr(err)
	}
	_, werr := f.Write(data)
	// The mode asked for, not the one the umask left.
	merr := f.Chmod(perm)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		_ = e.ws.root.Remove(tmp)
		return err
	}
	if err := e.ws.root.Rename(tmp, rel); err != nil {
		_ = e.ws.root.Remove(tmp)
		return rootErr(err)
	}
	return nil
}

type editArgs struct {
	Path          *string `json:"path"`
	OldString     *string `json:"old_string"`
	NewString     *string `json:"new_string"`
	ExpectedCount *int    `json:"expected_count"`
}

func (e *Executor) prepareEditFile(args json.RawMessage) (*call, error) {
	var a editArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	rel, err := e.changeTarget("path", a.Path)
	if err != nil {
		return nil, err
	}
	old, err := required("old_string", a.OldString)
	if err != nil {
		return nil, err
	}
	repl, err := required("new_string", a.NewString)
	if err != nil {
		return nil, err
	}
	if old == "" {
		return nil, fmt.Errorf("%w: old_string is empty (use write_file to create a file)", ErrBadArguments)
	}
	if old == repl {
		return nil, fmt.Errorf("%w: old_string and new_string are the same", ErrBadArguments)
	}
	want := 1
	if a.ExpectedCount != nil {
		want = *a.ExpectedCount
	}
	if want < 1 {
		return nil, fmt.Errorf("%w: expected_count must be at least 1", ErrBadArguments)
	}
	c := &call{touches: []string{rel},
		canon: map[string]any{"path": display(rel), "old_string": old, "new_string": repl, "expected_count": want}}
	c.run = func(ctx context.Context) (string, error) {
		b, perm, err := e.readText(rel, e.opts.MaxWriteBytes)
		if err != nil {
			return "", err
		}
		n := bytes.Count(b, []byte(old))
		if n != want {
			return "", fmt.Errorf("%w: old_string occurs %d times in %s, expected %d; nothing was changed", ErrBadArguments, n, display(rel), want)
		}
		out := bytes.ReplaceAll(b, []byte(old), []byte(repl))
		if len(out) > e.opts.MaxWriteBytes {
			return "", fmt.Errorf("%w: the edited file would be %d bytes, the limit is %d", ErrBadArguments, len(out), e.opts.MaxWriteBytes)
		}
		if err := e.atomicWrite(rel, out, perm); err != nil {
			return "", err
		}
		return fmt.Sprintf("replaced %d occurrence(s) in %s", n, display(rel)), nil
	}
	return c, nil
}

func (e *Executor) prepareMakeDir(args json.RawMessage) (*call, error) {
	var a pathArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	rel, err := e.changeTarget("path", a.Path)
	if err != nil {
		return nil, err
	}
	c := &call{touches: []string{rel}, canon: map[string]any{"path": display(rel)}}
	c.run = func(ctx context.Context) (string, error) {
		if fi, err := e.ws.root.Lstat(rel); err == nil {
			if fi.IsDir() {
				return display(rel) + " already exists", nil
			}
			return "", fmt.Errorf("%w: %s exists and is not a folder", ErrBadArguments, display(rel))
		}
		if err := e.ws.root.MkdirAll(rel, 0o755); err != nil {
			return "", rootErr(err)
		}
		return "created " + display(rel), nil
	}
	return c, nil
}

type moveArgs struct {
	From      *string `json:"from"`
	To        *string `json:"to"`
	Overwrite *bool   `json:"overwrite"`
}

func (e *Executor) prepareMovePath(args json.RawMessage) (*call, error) {
	var a moveArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	// The source itself is moved, not what a symlink at it points to.
	from, err := e.leafTarget("from", a.From)
	if err != nil {
		return nil, err
	}
	if fi, err := e.ws.root.Lstat(from); err != nil {
		return nil, fmt.Errorf("%w: %s does not exist", ErrBadArguments, display(from))
	} else if !fi.IsDir() && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return nil, fmt.Errorf("%w: %s is not a file or folder", ErrBadArguments, display(from))
	}
	to, err := e.changeTarget("to", a.To)
	if err != nil {
		return nil, err
	}
	overwrite := a.Overwrite != nil && *a.Overwrite
	if from == to {
		return nil, fmt.Errorf("%w: from and to are the same path", ErrBadArguments)
	}
	if _, in := within(from, to); in {
		return nil, fmt.Errorf("%w: cannot move %s into itself", ErrBadArguments, display(from))
	}
	c := &call{touches: []string{from, to}, canon: map[string]any{"from": display(from), "to": display(to), "overwrite": overwrite}}
	if fi, err := e.ws.root.Lstat(to); err == nil {
		if !overwrite {
			return nil, fmt.Errorf("%w: %s already exists (set overwrite to replace it)", ErrBadArguments, display(to))
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is a folder; move_path never replaces a folder", ErrBadArguments, display(to))
		}
		c.destructive = true
		c.note = "replaces the existing file " + display(to)
	}
	c.run = func(ctx context.Context) (string, error) {
		if dir := filepath.Dir(to); dir != "." {
			if err := e.ws.root.MkdirAll(dir, 0o755); err != nil {
				return "", rootErr(err)
			}
		}
		if !overwrite {
			// Checked again at run time: a file that appeared since is
			// still not replaced.
			if _, err := e.ws.root.Lstat(to); err == nil {
				return "", fmt.Errorf("%w: %s already exists (set overwrite to replace it)", ErrBadArguments, display(to))
			}
		}
		if err := e.ws.root.Rename(from, to); err != nil {
			return "", rootErr(err)
		}
		return "moved " + display(from) + " to " + display(to), nil
	}
	return c, nil
}

func (e *Executor) prepareDeletePath(args json.RawMessage) (*call, error) {
	var a pathArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	// A symlink is deleted, not what it points to.
	rel, err := e.leafTarget("path", a.Path)
	if err != nil {
		return nil, err
	}
	if _, err := e.ws.root.Lstat(rel); err != nil {
		return nil, fmt.Errorf("%w: %s does not exist", ErrBadArguments, display(rel))
	}
	c := &call{touches: []string{rel}, destructive: true, canon: map[string]any{"path": display(rel)},
		note: "moves " + display(rel) + " to Jarvis's trash"}
	c.run = func(ctx context.Context) (string, error) {
		if e.opts.TrashDir == "" {
			return "", fmt.Errorf("%w: delete_path needs Jarvis's trash folder, and none is configured", ErrUnsupported)
		}
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		slot := filepath.Join(e.opts.TrashDir, time.Now().UTC().Format("20060102T150405Z")+"-"+hex.EncodeToString(rnd[:]))
		if err := os.MkdirAll(slot, 0o700); err != nil {
			return "", err
		}
		dst := filepath.Join(slot, filepath.Base(rel))
		if err := moveOut(e.ws.abs(rel), dst); err != nil {
			os.Remove(slot)
			return "", err
		}
		return "moved " + display(rel) + " to Jarvis's trash", nil
	}
	return c, nil
}

// moveOut moves src (a resolved path inside the workspace) to dst outside
// it: a rename, or on another file system a copy and a removal.
func moveOut(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(src, dst); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return os.RemoveAll(src)
}

// copyTree copies a file, symlink or folder with modes, never following a
// symlink.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, r)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(out, fi.Mode().Perm()|0o700)
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, out)
		case fi.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
			if err != nil {
				return err
			}
			_, cerr := io.Copy(f, in)
			return errors.Join(cerr, f.Close())
		}
		return nil // sockets, fifos: not copied
	})
}

type searchArgs struct {
	Path    *string `json:"path"`
	Name    *string `json:"name"`
	Content *string `json:"content"`
}

// SearchHit is one match of search_files: a file whose name matched (Line
// 0), or a line that contains the searched text.
type SearchHit struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// SearchResult is search_files' result, returned as JSON.
type SearchResult struct {
	Hits      []SearchHit `json:"hits"`
	Truncated bool        `json:"truncated,omitempty"`
	// Skipped counts files not searched for content: binary or larger
	// than the per-file cap.
	Skipped int `json:"skipped,omitempty"`
	// Hidden counts files left out because reading them asks the user
	// first (credential stores; Options.Hide).
	Hidden int `json:"hidden,omitempty"`
}

// searchFileCap is the largest file whose content search_files reads.
const searchFileCap = 1 << 20

func (e *Executor) prepareSearchFiles(args json.RawMessage) (*call, error) {
	var a searchArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	rel, err := e.folder(a.Path)
	if err != nil {
		return nil, err
	}
	name, content := "", ""
	if a.Name != nil {
		name = *a.Name
	}
	if a.Content != nil {
		content = *a.Content
	}
	if name == "" && content == "" {
		return nil, fmt.Errorf("%w: give name (a glob such as \"*.md\"), content (text to find), or both", ErrBadArguments)
	}
	if name != "" {
		if _, err := path.Match(name, ""); err != nil {
			return nil, fmt.Errorf("%w: name %q is not a valid glob: %v", ErrBadArguments, name, err)
		}
	}
	if strings.ContainsAny(content, "\n\x00") {
		return nil, fmt.Errorf("%w: content must be one line of text", ErrBadArguments)
	}
	canon := map[string]any{"path": display(rel)}
	if name != "" {
		canon["name"] = name
	}
	if content != "" {
		canon["content"] = content
	}
	return &call{canon: canon, run: func(ctx context.Context) (string, error) {
		out := SearchResult{Hits: []SearchHit{}}
		full := errors.New("full")
		fsys := e.ws.root.FS()
		err := fs.WalkDir(fsys, filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable folder: skip it
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d.IsDir() {
				if fi, err := os.Lstat(e.ws.abs(filepath.FromSlash(p))); err == nil && e.ws.protected.Is(fi) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if name != "" {
				if ok, _ := path.Match(name, d.Name()); !ok {
					return nil
				}
			}
			if e.opts.Hide != nil && e.opts.Hide(p) {
				out.Hidden++
				return nil
			}
			if content != "" {
				// A hard link to one of Jarvis's files is not read.
				if fi, err := d.Info(); err != nil || (linkCount(fi) > 1 && e.ws.protected.Holds(e.ws.real, e.ws.abs(filepath.FromSlash(p)))) {
					return nil
				}
			}
			if content == "" {
				out.Hits = append(out.Hits, SearchHit{Path: p})
			} else if !e.searchIn(fsys, p, content, &out) {
				out.Skipped++
			}
			if len(out.Hits) >= e.opts.MaxEntries {
				out.Hits = out.Hits[:e.opts.MaxEntries]
				out.Truncated = true
				return full
			}
			return nil
		})
		if err != nil && err != full {
			return "", err
		}
		b, err := json.Marshal(out)
		return string(b), err
	}}, nil
}

// searchIn appends the lines of file p that contain text; false when the
// file was not searched (binary, too large or unreadable).
func (e *Executor) searchIn(fsys fs.FS, p, text string, out *SearchResult) bool {
	f, err := fsys.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > searchFileCap {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, searchFileCap+1))
	if err != nil || isBinary(b) {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), searchFileCap+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.Contains(line, text) {
			continue
		}
		if len(line) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut] + "…"
		}
		out.Hits = append(out.Hits, SearchHit{Path: p, Line: n, Text: line})
		if len(out.Hits) >= e.opts.MaxEntries {
			break
		}
	}
	return true
}
