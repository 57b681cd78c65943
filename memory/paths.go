package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Workspace layout. Paths crossing the API are relative to Options.Root and
// use forward slashes, e.g. "memory/MEMORY.md".
const (
	memDirName   = "memory"
	longTermName = "MEMORY.md"

	kindLongTerm = "long_term"
	kindDaily    = "daily"
	kindNote     = "note" // any other .md file under memory/; found by kind ""
)

var dailyName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\.md$`)

// cleanRel validates a workspace-relative path given by a caller and returns
// it cleaned, with forward slashes. It is purely lexical: resolve checks
// symlinks. We refuse rather than clean ".." so that "memory/../memory/x.md"
// is an error the caller sees, not a silent rewrite.
func cleanRel(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s", ErrInvalidPath, p, why)
	}
	switch {
	case p == "":
		return bad("empty")
	case strings.ContainsRune(p, 0):
		return bad("contains NUL")
	case filepath.IsAbs(p) || path.IsAbs(p) || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "":
		return bad("absolute paths are not allowed")
	}
	p = strings.ReplaceAll(p, `\`, "/")
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return bad(`".." is not allowed`)
		}
	}
	p = path.Clean(p)
	if !strings.HasPrefix(p, memDirName+"/") {
		return bad("must be under " + memDirName + "/")
	}
	base := path.Base(p)
	if !strings.EqualFold(path.Ext(base), ".md") {
		return bad("only .md files")
	}
	if strings.HasPrefix(base, ".") {
		return bad("hidden files are not memory")
	}
	return p, nil
}

// kindOf classifies a cleaned relative path and, for daily notes, returns
// the note's date (local midnight).
func kindOf(rel string) (kind string, day time.Time) {
	dir, base := path.Split(rel)
	if dir != memDirName+"/" {
		return kindNote, time.Time{}
	}
	if base == longTermName {
		return kindLongTerm, time.Time{}
	}
	if dailyName.MatchString(base) {
		if d, err := time.ParseInLocation("2006-01-02", strings.TrimSuffix(base, ".md"), time.Local); err == nil {
			return kindDaily, d
		}
	}
	return kindNote, time.Time{}
}

// resolve maps a cleaned relative path to the real file it names, following
// symlinks, and refuses it if the real file is outside the memory folder.
// The memory folder itself may be a symlink (notes kept in a synced folder);
// "inside" is judged against its resolved location. A missing file resolves
// to its lexical location with an error wrapping ErrNotFound, so Write can
// create it.
func (s *Store) resolve(rel string) (string, error) {
	abs := filepath.Join(s.root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// A dangling symlink is not "missing": refuse it instead of letting
		// Write create a file wherever it points.
		if fi, lerr := os.Lstat(abs); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: %q is a dangling symlink", ErrInvalidPath, rel)
		}
		// The parent must still be inside (e.g. memory/sub -> /etc).
		if dir, derr := filepath.EvalSymlinks(filepath.Dir(abs)); derr == nil && !within(s.realMem, dir) {
			return "", fmt.Errorf("%w: %q leads outside the workspace", ErrInvalidPath, rel)
		}
		return abs, fmt.Errorf("%w: %s", ErrNotFound, rel)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalidPath, rel, err)
	}
	if !within(s.realMem, real) {
		return "", fmt.Errorf("%w: %q leads outside the workspace", ErrInvalidPath, rel)
	}
	if fi, err := os.Stat(real); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %q is not a regular file", ErrInvalidPath, rel)
	}
	return real, nil
}

// within reports whether p is dir or below it (both already resolved).
func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// relOf turns an absolute path under the memory folder (as reported by the
// walker or the watcher, not resolved) into a cleaned relative path, or
// returns false if it is not an indexable memory file.
func (s *Store) relOf(abs string) (string, bool) {
	r, err := filepath.Rel(s.root, abs)
	if err != nil {
		return "", false
	}
	rel, err := cleanRel(filepath.ToSlash(r))
	return rel, err == nil
}
