package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"jarvis/app/gate"
)

// watchPolicy puts policy.json in force again whenever it changes on disk
// (edited in a terminal on a headless machine, or by another window's
// Permissions page), until ctx ends. The file is in the data dir, which the
// file tools cannot reach. An edit that does not load leaves the policy in
// force and says why in the log.
func watchPolicy(ctx context.Context, path string, g *gate.Gate, log *slog.Logger) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	// The folder, not the file: editors replace files by renaming.
	if err := w.Add(filepath.Dir(path)); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		var debounce <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == path {
					debounce = time.After(100 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("policy: watching the policy file", "err", err)
			case <-debounce:
				p, err := gate.LoadPolicy(path)
				if err == nil {
					err = g.SetPolicy(p)
				}
				if err != nil {
					log.Warn("policy: the edited policy file was not put in force; the previous policy stays", "file", path, "err", err)
					continue
				}
				log.Info("policy: the policy file changed on disk and is in force", "file", path, "rules", len(p.Rules))
			}
		}
	}()
	return nil
}
