package memory

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// startWatcher watches the memory folder and its (non-hidden) subfolders.
// inotify is not recursive, so folders created later are added as they
// appear. Editors that save by writing a temporary file and renaming it over
// the note show up as a Create (IN_MOVED_TO) of the note's name, which is
// handled like any other change: whatever the event, we re-stat the path
// and let syncFile decide.
func (s *Store) startWatcher() error {
	w, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return err
	}
	s.watcher = w
	return s.watchTree(s.memDir)
}

func (s *Store) watchTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != s.memDir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := s.watcher.Add(p); err != nil {
			s.log.Warn("memory watch", "path", p, "err", err)
		}
		return nil
	})
}

// watchLoop batches events per path and re-indexes each touched path once
// per Debounce window. A queue overflow means events were lost, so it falls
// back to a full reconciliation.
func (s *Store) watchLoop() {
	defer s.wg.Done()
	ctx, cancel := s.untilClose()
	defer cancel()

	pending := map[string]fsnotify.Op{}
	full := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	arm := func() {
		if !armed {
			timer.Reset(s.opts.Debounce)
			armed = true
		}
	}
	for {
		select {
		case <-s.done:
			return
		case ev, ok := <-s.watcher.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && !strings.HasPrefix(fi.Name(), ".") {
					// A folder appeared (created or moved in): watch it and
					// index what it already holds.
					s.watchTree(ev.Name)
					full = true
				}
			}
			pending[ev.Name] |= ev.Op
			arm()
		case err, ok := <-s.watcher.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.log.Warn("memory watcher overflow, rescanning")
				full = true
				arm()
			} else {
				s.log.Warn("memory watcher", "err", err)
			}
		case <-timer.C:
			armed = false
			if full {
				full = false
				if _, err := s.reconcile(ctx, false); err != nil && ctx.Err() == nil {
					s.log.Warn("memory rescan", "err", err)
				}
			}
			for abs, op := range pending {
				delete(pending, abs)
				if ctx.Err() != nil {
					return
				}
				s.handleEvent(ctx, abs, op)
			}
		}
	}
}

func (s *Store) handleEvent(ctx context.Context, abs string, op fsnotify.Op) {
	if rel, ok := s.relOf(abs); ok {
		if err := s.syncLocked(ctx, rel); err != nil && ctx.Err() == nil {
			s.log.Warn("memory reindex", "path", rel, "err", err)
		}
		return
	}
	// A folder removed or moved away takes its notes with it. (Our own
	// temporary files also land here; they are not folders, so skip them
	// cheaply.)
	if !op.Has(fsnotify.Remove) && !op.Has(fsnotify.Rename) {
		return
	}
	base := filepath.Base(abs)
	if strings.HasPrefix(base, ".") || strings.EqualFold(filepath.Ext(base), ".md") {
		return
	}
	if _, err := os.Lstat(abs); err == nil {
		return
	}
	if r, err := filepath.Rel(s.root, abs); err == nil && !strings.HasPrefix(r, "..") {
		if err := s.removeFile(ctx, filepath.ToSlash(r)); err != nil && ctx.Err() == nil {
			s.log.Warn("memory unindex folder", "path", r, "err", err)
		}
	}
}
