package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Write targets.
const (
	TargetLongTerm = kindLongTerm // memory/MEMORY.md
	TargetDaily    = kindDaily    // memory/YYYY-MM-DD.md, today per Options.Now
)

// targetPath maps a Write target to its relative path. The daily file is
// named after Options.Now's date in that time's own location (time.Now is
// local time), so an injected clock fully decides it.
func (s *Store) targetPath(target string) (string, error) {
	switch target {
	case TargetLongTerm:
		return memDirName + "/" + longTermName, nil
	case TargetDaily:
		return memDirName + "/" + s.opts.Now().Format("2006-01-02") + ".md", nil
	}
	return "", fmt.Errorf("%w: %q (want %q or %q)", ErrInvalidTarget, target, TargetLongTerm, TargetDaily)
}

// Write appends content as a new entry (separated by a blank line) to the
// target's file, creating it with a title if needed, and returns the file's
// path relative to the workspace, e.g. "memory/MEMORY.md". When Write
// returns nil the entry is on stable storage and searchable (if updating the
// derived index fails, that is logged, not returned: the watcher or the next
// Open re-indexes the file). Writes to one file are serialised; the file
// keeps its line-ending style.
func (s *Store) Write(ctx context.Context, target, content string) (string, error) {
	if s.closed() {
		return "", ErrClosed
	}
	rel, err := s.targetPath(target)
	if err != nil {
		return "", err
	}
	if len(content) > s.opts.MaxWriteBytes {
		return "", fmt.Errorf("%w: entry is %d bytes, max %d", ErrTooLarge, len(content), s.opts.MaxWriteBytes)
	}
	if !utf8.ValidString(content) || strings.ContainsRune(content, 0) {
		return "", fmt.Errorf("%w: content must be UTF-8 text without NUL", ErrInvalidContent)
	}
	entry := strings.TrimRight(content, " \t\r\n")
	entry = strings.TrimLeft(entry, "\r\n")
	if strings.TrimSpace(entry) == "" {
		return "", fmt.Errorf("%w: empty entry", ErrInvalidContent)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}

	if err := s.modify(ctx, rel, true, func(old []byte) ([]byte, error) {
		return appendEntry(old, entry, titleFor(rel)), nil
	}); err != nil {
		return "", err
	}
	return rel, nil
}

// modify replaces the file at rel with edit(its content) under the file's
// lock, durably (writeFileAtomic), and re-indexes it. create allows rel not
// to exist yet (edit then gets nil).
func (s *Store) modify(ctx context.Context, rel string, create bool, edit func(old []byte) ([]byte, error)) error {
	m := s.fileLock(rel)
	m.Lock()
	defer m.Unlock()

	// Read-modify-rename, retried if another program changes the file while
	// we work, so that an edit saved in an editor at the same moment is not
	// overwritten by our stale copy. The window left (between the last stat
	// and rename) is microseconds.
	for attempt := 0; ; attempt++ {
		real, err := s.resolve(rel)
		exists := err == nil
		if err != nil && (!create || !errors.Is(err, ErrNotFound)) {
			return err
		}
		var old []byte
		var before os.FileInfo
		perm := fs.FileMode(0o600)
		if exists {
			if before, err = os.Stat(real); err != nil {
				return fmt.Errorf("memory: write %s: %w", rel, err)
			}
			perm = before.Mode().Perm()
			if old, err = os.ReadFile(real); err != nil {
				return fmt.Errorf("memory: write %s: %w", rel, err)
			}
		}
		data, err := edit(old)
		if err != nil {
			return err
		}
		if int64(len(data)) > s.opts.MaxFileBytes {
			return fmt.Errorf("%w: %s would grow to %d bytes, max %d", ErrTooLarge, rel, len(data), s.opts.MaxFileBytes)
		}
		changed := func() bool {
			fi, err := os.Stat(real)
			if !exists {
				return err == nil
			}
			return err != nil || !fi.ModTime().Equal(before.ModTime()) || fi.Size() != before.Size()
		}
		if err := writeFileAtomic(real, data, perm, changed); err != nil {
			if errors.Is(err, errChangedUnderUs) && attempt < 5 {
				continue
			}
			return fmt.Errorf("memory: write %s: %w", rel, err)
		}
		fi, err := os.Stat(real)
		if err == nil {
			err = s.storeParsed(ctx, []parsed{{rel: rel, fi: fi, hash: hashOf(data), chunks: chunkLines(splitLines(string(data)))}})
		}
		if err != nil {
			// The note is safely on disk; only the derived index lags. The
			// watcher (or the next Open) will catch up, so this is not the
			// caller's failure.
			s.log.Warn("memory index after write", "path", rel, "err", err)
		}
		return nil
	}
}

func titleFor(rel string) string {
	switch kind, day := kindOf(rel); kind {
	case kindDaily:
		return "# " + day.Format("2006-01-02")
	case kindLongTerm:
		return "# Long-term memory"
	}
	return ""
}

// appendEntry returns old + a blank line + entry + a final line break,
// using old's line-ending style (CRLF if its first line ends in CRLF).
func appendEntry(old []byte, entry, title string) []byte {
	eol := "\n"
	if i := strings.IndexByte(string(old), '\n'); i > 0 && old[i-1] == '\r' {
		eol = "\r\n"
	}
	entry = strings.ReplaceAll(entry, "\r\n", "\n")
	if eol != "\n" {
		entry = strings.ReplaceAll(entry, "\n", eol)
	}
	var b strings.Builder
	b.Grow(len(old) + len(entry) + len(title) + 8)
	b.Write(old)
	if len(strings.TrimSpace(string(old))) == 0 {
		b.Reset()
		if title != "" {
			b.WriteString(title + eol + eol)
		}
	} else {
		s := string(old)
		switch {
		case strings.HasSuffix(s, eol+eol), strings.HasSuffix(s, "\n\n"):
		case strings.HasSuffix(s, "\n"):
			b.WriteString(eol)
		default:
			b.WriteString(eol + eol)
		}
	}
	b.WriteString(entry)
	b.WriteString(eol)
	return []byte(b.String())
}

var errChangedUnderUs = errors.New("file changed during write")

// writeFileAtomic replaces path with data: write a temporary file in the
// same folder, fsync it, rename it over path, fsync the folder.
//
// Why not O_APPEND + fsync under the mutex? Because it is not crash-atomic.
// A SIGKILL can land in the middle of a large write(2): Linux checks for
// fatal signals between pages in generic_perform_write and returns a short
// write, leaving half an entry in the file; a power cut after a partial
// writeback can leave a torn or zero-filled tail. rename(2) replaces the
// directory entry atomically, so every reader and every crash sees either
// the complete old file or the complete new one; the fsync before the rename
// orders the data before the name, and the folder fsync makes the rename
// itself durable before we acknowledge. The price is rewriting the file on
// each append, which MaxFileBytes bounds (notes are small; 8 MiB by
// default). A crash can leave a stray ".NAME.tmp-*" file, which is never
// indexed and which Open removes.
//
// changed, checked just before the rename, lets the caller abort if another
// program modified path meanwhile.
func writeFileAtomic(path string, data []byte, perm fs.FileMode, changed func() bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if changed != nil && changed() {
		return errChangedUnderUs
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some platforms (Windows) and filesystems cannot fsync a folder; the
	// rename is still atomic there, only its durability is up to the OS.
	_ = d.Sync()
	return nil
}

var staleTemp = regexp.MustCompile(`^\..+\.tmp-\d+$`)

// removeStaleTemps deletes temporary files left by a crash mid-Write.
func (s *Store) removeStaleTemps() {
	entries, err := os.ReadDir(s.memDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && staleTemp.MatchString(e.Name()) {
			if err := os.Remove(filepath.Join(s.memDir, e.Name())); err == nil {
				s.log.Info("memory removed stale temp file", "name", e.Name())
			}
		}
	}
}
