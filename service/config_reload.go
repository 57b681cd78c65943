package service

// Configuration reload without a restart: the config file is watched
// (fsnotify, on its folder, since editors save by renaming a new file over
// the old one) and reloaded on SIGHUP (cmd/jarvis-service). A new config
// replaces the current one only when it is valid; otherwise the error
// (file:line: field ...) is logged and the old one stays. Running turns keep
// the config they started with; the next turn, GET /v1/agents and prompts
// see the new one.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"jarvis/internal/approved"
	"jarvis/service/config"
)

// configDebounce groups the burst of events one save makes (truncate,
// write, chmod, or create+rename) into one reload.
const configDebounce = 150 * time.Millisecond

// ReloadConfig reads the config file at path and, when it is valid, makes it
// the service's config. On error the current config stays and the error is
// returned. A missing file is an error here, unlike at startup (the
// built-in defaults): editors that save by delete and rename, sync tools and
// git checkout delete it for a moment, and the defaults would turn
// restricted agents into the default agent with every tool and send turns
// to another provider. The warning stays in GET /v1/agents (the window
// shows it) until a reload succeeds. With Options.Approved, content the
// user did not approve is not applied either (ErrConfigNotApproved).
func (s *Service) ReloadConfig(path string) error {
	var c *config.Config
	b, err := os.ReadFile(path)
	if err == nil && s.approved != nil {
		// Only content the user approved is applied (config_approval.go).
		var ok bool
		if ok, err = s.approved.Check(ConfigApproval, b); err == nil && !ok {
			w := notApproved(path, b)
			s.confWarning.Store(&w)
			s.markPending(path, b)
			s.log.Warn("config file changed outside Jarvis; not applied until approved", "config", path, "sha256", approved.Hash(b))
			return ErrConfigNotApproved
		}
	}
	if err == nil {
		c, err = config.Parse(path, b)
	} else if errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("config file %s is missing; the config loaded before is kept until the file is back", path)
		s.confWarning.Store(&[]string{err.Error()}[0])
		s.log.Warn("config file missing; keeping the current config", "config", path)
		return err
	}
	if err != nil {
		s.log.Error("config reload refused; keeping the current config", "err", err)
		s.confWarning.Store(&[]string{"config reload refused, the config loaded before is kept: " + err.Error()}[0])
		return err
	}
	s.SetConfig(c)
	s.confWarning.Store(nil)
	s.pendingConf.Store(nil)
	s.log.Info("config reloaded", "config", path, "agents", len(c.Agents))
	return nil
}

// configWarning is why the config file was last not reloaded ("" when it was).
func (s *Service) configWarning() string {
	if w := s.confWarning.Load(); w != nil {
		return *w
	}
	return ""
}

// WatchConfig reloads the config file at path whenever it changes, until
// ctx ends or the service closes. It returns an error when the file's
// folder cannot be watched (reload then needs SIGHUP or a restart).
func (s *Service) WatchConfig(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config watch: %w", err)
	}
	dir := filepath.Dir(abs)
	if err := w.Add(dir); err != nil {
		w.Close()
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("config watch: folder %s does not exist; create it to have %s reloaded when it changes", dir, filepath.Base(abs))
		}
		return fmt.Errorf("config watch: %w", err)
	}
	// An approval from a terminal (`jarvis config approve`) applies the
	// file at once.
	var approval string
	if s.approved != nil && s.dataDir != "" {
		adir := approved.Dir(s.dataDir)
		if err := w.Add(adir); err == nil {
			approval = filepath.Join(adir, ConfigApproval)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer w.Close()
		var debounce *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.closing:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if n := filepath.Clean(ev.Name); (n != abs && n != approval) || ev.Op == fsnotify.Chmod {
					continue
				}
				if debounce == nil {
					debounce = time.NewTimer(configDebounce)
				} else {
					debounce.Reset(configDebounce)
				}
				fire = debounce.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Warn("config watch", "err", err)
			case <-fire:
				fire = nil
				s.ReloadConfig(abs)
			}
		}
	}()
	return nil
}
