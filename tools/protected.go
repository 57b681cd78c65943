package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Protected is the one set of Jarvis's own files and folders that no file
// tool touches and no program Jarvis starts may reach: its config folder
// (config.json, mcp.json, secrets.json, ...), its data dir (the databases,
// the token, policy.json, the approved configurations), the audit chain's
// key folder, the trash and the checkpoint store.
//
// It holds each entry by identity (device and inode, symlinks resolved), not
// only by name: a path is refused when it or any folder on its way is one of
// the entries, however it is spelt (./, //, absolute, a symlink, another
// case on a case-insensitive disk) and after the entry or an ancestor was
// renamed; a hard link to a file of a protected folder is refused too. A
// move or delete of any ancestor of an entry is refused (Ancestor). On
// Linux each existing folder entry is held open, so its current path is
// known after a rename (Paths).
//
// An entry that does not exist yet (a config folder before the first setup)
// is protected by its path, and by identity from the first check that
// finds it.
type Protected struct {
	mu      sync.Mutex
	entries []*protEntry
}

type protEntry struct {
	path string      // absolute, as given, symlinks evaluated when it existed
	id   fs.FileInfo // its identity once it existed; nil before
	dir  *os.File    // the folder held open (Linux), to learn its current path
}

// NewProtected protects paths (relative ones are made absolute; empty ones
// are skipped).
func NewProtected(paths ...string) *Protected {
	p := &Protected{}
	seen := map[string]bool{}
	for _, s := range paths {
		if s == "" {
			continue
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		p.entries = append(p.entries, &protEntry{path: abs})
	}
	p.mu.Lock()
	p.learnLocked()
	p.mu.Unlock()
	return p
}

// learnLocked records the identity of entries that exist now and had none.
func (p *Protected) learnLocked() {
	for _, e := range p.entries {
		if e.id != nil {
			continue
		}
		fi, err := os.Stat(e.path)
		if err != nil {
			continue
		}
		e.id = fi
		if fi.IsDir() && runtime.GOOS == "linux" {
			if f, err := os.Open(e.path); err == nil {
				e.dir = f
			}
		}
	}
}

// current is where the entry is now: the path of its open folder when the
// kernel reports one, and the path it was given (symlinks evaluated).
func (e *protEntry) current() []string {
	var out []string
	if e.dir != nil {
		if l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(e.dir.Fd()))); err == nil && filepath.IsAbs(l) && !strings.HasSuffix(l, " (deleted)") {
			out = append(out, l)
		}
	}
	p := e.path
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if len(out) == 0 || out[0] != p {
		out = append(out, p)
	}
	return out
}

// Paths returns the absolute paths of the protected entries as they are
// now (after a rename, where the kernel tells it), for a sandbox that must
// keep programs out of them.
func (p *Protected) Paths() []string {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked()
	var out []string
	for _, e := range p.entries {
		out = append(out, e.current()...)
	}
	return out
}

// Close releases the folders held open.
func (p *Protected) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, e := range p.entries {
		if e.dir != nil {
			errs = append(errs, e.dir.Close())
			e.dir = nil
		}
	}
	return errors.Join(errs...)
}

// Holds reports whether abs, an absolute path whose existing part has its
// symlinks evaluated, is a protected entry or lies inside one. Only the
// part below base (the workspace) is examined by identity, and an entry
// that holds the workspace itself (the default workspace lies in the data
// dir) does not refuse it all. A regular file with other hard links is
// compared with the files of the protected folders.
func (p *Protected) Holds(base, abs string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked()
	var skip map[*protEntry]bool // entries holding the workspace itself
	for _, e := range p.entries {
		for _, c := range e.current() {
			if _, in := within(c, base); in {
				if skip == nil {
					skip = map[*protEntry]bool{}
				}
				skip[e] = true
			}
		}
	}
	for _, e := range p.entries {
		for _, c := range e.current() {
			if _, in := within(c, abs); in && !skip[e] {
				return true
			}
		}
	}
	rel, ok := within(base, abs)
	if !ok {
		return false
	}
	cur := base
	parts := []string{"."}
	if rel != "." {
		parts = append(parts, strings.Split(rel, string(filepath.Separator))...)
	}
	var last fs.FileInfo
	for _, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return false // the rest does not exist yet
		}
		if p.identicalLocked(fi, skip) {
			return true
		}
		last = fi
	}
	return last.Mode().IsRegular() && linkCount(last) > 1 && p.hardLinkLocked(last)
}

// Ancestor reports whether abs (as for Holds) is an ancestor of a protected
// entry, or the entry itself: a move or delete of it would take the entry
// along.
func (p *Protected) Ancestor(abs string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked()
	for _, e := range p.entries {
		for _, c := range e.current() {
			if _, in := within(abs, c); in {
				return true
			}
		}
	}
	return false
}

// Is reports whether fi (from os.Lstat or os.Stat) is a protected entry.
func (p *Protected) Is(fi fs.FileInfo) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.identicalLocked(fi, nil)
}

func (p *Protected) identicalLocked(fi fs.FileInfo, skip map[*protEntry]bool) bool {
	for _, e := range p.entries {
		if e.id != nil && !skip[e] && os.SameFile(e.id, fi) {
			return true
		}
	}
	return false
}

// hardLinkLocked reports whether fi is one of the files directly inside a
// protected folder (config files, databases, keys), seen through another
// hard link. The checkpoint store's objects, which keep old inodes of
// workspace files, are deeper and not compared.
func (p *Protected) hardLinkLocked(fi fs.FileInfo) bool {
	for _, e := range p.entries {
		if e.id == nil {
			continue
		}
		if !e.id.IsDir() {
			continue // a file entry is compared by identicalLocked
		}
		dir := e.current()[0]
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, d := range ents {
			if !d.Type().IsRegular() {
				continue
			}
			if o, err := os.Lstat(filepath.Join(dir, d.Name())); err == nil && os.SameFile(o, fi) {
				return true
			}
		}
	}
	return false
}
