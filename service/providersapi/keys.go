package providersapi

import (
	"errors"

	"jarvis/service/redact"
	"jarvis/service/secrets"
)

// Keys is the secret store as the service was given it, and the redactor
// that learns every value read from it or stored in it.
type Keys struct {
	Secrets redact.Store // nil: no secret store
	Red     *redact.Set
}

// writer is what storing a key needs beyond Get; the keyring store
// (secrets.Store) has it, a read-only store does not.
type writer interface {
	Set(ref, value string) error
	Delete(ref string) error
}

// putter is a writer that says where a value went (secrets.InKeyring or
// secrets.InFile, the less protected fallback file).
type putter interface {
	Put(ref, value string) (where string, err error)
}

// locator is a store that says where a value was found.
type locator interface {
	Lookup(ref string) (value, where string, err error)
}

// Get returns the secret ref names (the redactor learns it).
func (k Keys) Get(ref string) (string, error) {
	if k.Secrets == nil {
		return "", errors.New("this service has no secret store")
	}
	return redact.Record(k.Secrets, k.Red).Get(ref)
}

// Put stores value under ref and says where it went ("" when the store
// does not say).
func (k Keys) Put(ref, value string) (string, error) {
	if p, ok := k.Secrets.(putter); ok {
		k.Red.Add(value)
		return p.Put(ref, value)
	}
	if w, ok := k.Secrets.(writer); ok {
		k.Red.Add(value)
		return "", w.Set(ref, value)
	}
	return "", errors.New("this service has no writable secret store")
}

// Delete removes ref from the secret store, when the store can.
func (k Keys) Delete(ref string) error {
	if w, ok := k.Secrets.(writer); ok {
		return w.Delete(ref)
	}
	return nil
}

// stored says whether ref has a value, where (when the store says) and
// the fallback file's path when it is there.
func (k Keys) stored(ref string) (ok bool, where, file string) {
	l, isLocator := k.Secrets.(locator)
	if !isLocator {
		_, err := k.Get(ref)
		return err == nil, "", ""
	}
	_, where, err := l.Lookup(ref)
	if err != nil {
		return false, "", ""
	}
	if f, isFile := k.Secrets.(interface{ FilePath() string }); isFile && where == secrets.InFile {
		file = f.FilePath()
	}
	return true, where, file
}
