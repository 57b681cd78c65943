package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// workspace confines the file tools to one folder.
//
// A path is checked twice. First lexically: no ".." element anywhere, and an
// absolute path must lie inside the folder. Then every symlink in the part of
// the path that exists is evaluated and the result must still lie inside.
// The operation itself then runs through an os.Root opened on the folder, with
// the already-resolved relative path, so a symlink swapped in between the
// check and the use still cannot lead outside (os.Root refuses it).
//
// Jarvis's own files and folders (Protected) are refused after the
// symlinks are evaluated, by identity, so no spelling, link or rename
// reaches them.
type workspace struct {
	dir       string     // absolute, as configured
	real      string     // dir with its own symlinks evaluated
	root      *os.Root   // opened on real
	protected *Protected // refused by every file tool
}

func openWorkspace(dir string, protected []string) (*workspace, error) {
	if dir == "" {
		return nil, errors.New("tools: workspace folder is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("tools: workspace %s is not a folder", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	return &workspace{dir: abs, real: real, root: root, protected: NewProtected(protected...)}, nil
}

// refuseProtected is the one error of a path in the protected set.
func refuseProtected(p string) error {
	return fmt.Errorf("%w: %q is one of Jarvis's own files or folders (its settings, data, keys, trash or checkpoints), which the file tools never touch", ErrNotAllowed, p)
}

// guard refuses a resolved path that is protected or lies inside a
// protected folder.
func (w *workspace) guard(p, rel string) error {
	if w.protected.Holds(w.real, filepath.Join(w.real, rel)) {
		return refuseProtected(p)
	}
	return nil
}

// within reports p relative to base when p is base or lies beneath it.
func within(base, p string) (string, bool) {
	r, err := filepath.Rel(base, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return r, true
}

// lexical validates p without touching the disk and returns it relative to
// the workspace ("." for the folder itself).
func (w *workspace) lexical(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrBadArguments)
	}
	if p == "" || p == "." {
		return ".", nil
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", fmt.Errorf("%w: %q contains \"..\"", ErrOutsideWorkspace, p)
		}
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, base := range []string{w.dir, w.real} {
			if r, ok := within(base, c); ok {
				return r, nil
			}
		}
		return "", fmt.Errorf("%w: %q", ErrOutsideWorkspace, p)
	}
	// Not absolute but rooted somewhere else: "C:foo" (drive-relative) or
	// "\foo" (current drive's root) on Windows.
	if filepath.VolumeName(p) != "" || (runtime.GOOS == "windows" && (p[0] == '\\' || p[0] == '/')) {
		return "", fmt.Errorf("%w: %q", ErrOutsideWorkspace, p)
	}
	return filepath.Clean(p), nil
}

// resolve returns p relative to the workspace's real folder with every
// symlink in its existing prefix evaluated. The remainder need not exist.
func (w *workspace) resolve(p string) (string, error) {
	rel, err := w.lexical(p)
	if err != nil {
		return "", err
	}
	existing := filepath.Join(w.real, rel)
	var tail []string // missing elements, innermost first
	var resolved string
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			resolved = r
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %q: %v", ErrBadArguments, p, err)
		}
		// A dangling symlink would be followed on create; refuse it
		// rather than guess where it leads.
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: %q goes through a dangling symlink", ErrOutsideWorkspace, p)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", fmt.Errorf("%w: %q", ErrOutsideWorkspace, p)
		}
		tail = append(tail, filepath.Base(existing))
		existing = parent
	}
	for i := len(tail) - 1; i >= 0; i-- {
		resolved = filepath.Join(resolved, tail[i])
	}
	r, ok := within(w.real, resolved)
	if !ok {
		return "", fmt.Errorf("%w: %q resolves to %s", ErrOutsideWorkspace, p, resolved)
	}
	if err := w.guard(p, r); err != nil {
		return "", err
	}
	return r, nil
}

// abs returns the absolute path of a resolved relative path, for handing to
// another program.
func (w *workspace) abs(rel string) string { return filepath.Join(w.real, rel) }

// rootErr maps os.Root's refusal to follow a path outside to
// ErrOutsideWorkspace; os does not export that error.
func rootErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %v", ErrOutsideWorkspace, err)
	}
	return err
}

// display renders a resolved relative path with forward slashes.
func display(rel string) string { return filepath.ToSlash(rel) }
