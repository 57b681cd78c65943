package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// fileWarning heads the fallback file, so that whoever opens it knows what it is.
const fileWarning = "These secrets are stored in plain text because no OS keyring (Secret Service) was available when they were saved. " +
	"The file is readable only by your user (mode 0600), but anything running as you can read it: it is less protected than a keyring. " +
	"Delete an entry to remove the key; JARVIS_SECRET_<REF> environment variables take precedence."

// fileStore is the fallback: one JSON file, mode 0600, written atomically.
type fileStore struct {
	path string
	log  *slog.Logger
	mu   sync.Mutex
}

type fileDoc struct {
	Warning string            `json:"warning"`
	Secrets map[string]string `json:"secrets"`
}

// read loads the file; a missing file is empty. A file others can read is
// refused, as ssh refuses such a key: it may already have leaked.
func (f *fileStore) read() (fileDoc, error) {
	doc := fileDoc{Secrets: map[string]string{}}
	fi, err := os.Stat(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return doc, fmt.Errorf("the secrets file %s has mode %04o: others may read it; run chmod 600 on it (and consider the keys in it exposed)", f.path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("the secrets file %s is not valid JSON: %v", f.path, err)
	}
	if doc.Secrets == nil {
		doc.Secrets = map[string]string{}
	}
	return doc, nil
}

func (f *fileStore) get(ref string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := f.read()
	if err != nil {
		return "", false, err
	}
	v, ok := doc.Secrets[ref]
	return v, ok, nil
}

func (f *fileStore) set(ref, value string) error {
	return f.update(func(m map[string]string) bool { m[ref] = value; return true })
}

func (f *fileStore) delete(ref string) error {
	return f.update(func(m map[string]string) bool {
		_, ok := m[ref]
		delete(m, ref)
		return ok
	})
}

// update changes the map under the lock and writes the file back when
// change reports a change (a temp file in the same dir, 0600, renamed).
func (f *fileStore) update(change func(map[string]string) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := f.read()
	if err != nil {
		return err
	}
	if !change(doc.Secrets) {
		return nil
	}
	doc.Warning = fileWarning
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".secrets-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}
