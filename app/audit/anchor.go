package audit

// The chain key and the head anchor, both kept outside the audit file.
//
// The key (32 random bytes) is in the OS keyring (Options.Keyring, ref
// KeyRef) or, when there is none, in a 0600 file "key" in Options.KeyDir.
// The head anchor is a small file in KeyDir, one per log (named after the
// log's absolute path): the id and hash of the newest row, the last legacy
// row, and an HMAC of these under the key. It is written in the same
// transaction as each row (before the commit), so that a log cut short,
// deleted and created anew, or rewritten under another key no longer
// matches it.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyRef is the keyring reference of the chain key.
const KeyRef = "audit-chain-key"

// KeyStore keeps the chain key apart from the log: the OS keyring
// (service/secrets' Store fits). Get fails for a missing key and for an
// unavailable keyring alike.
type KeyStore interface {
	Get(ref string) (string, error)
	Set(ref, value string) error
}

// ErrTampered is wrapped by Append's refusal when the log no longer
// matches its head anchor: it was cut short, replaced or rewritten. The log
// is left as it is, as evidence; Verify says what is wrong.
var ErrTampered = errors.New("audit: the log does not match its head anchor")

// DefaultKeyDir is <user config dir>/jarvis/audit, the default of
// Options.KeyDir: apart from the data dir that holds the log.
func DefaultKeyDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("audit: no folder for the chain key and head anchor: %w", err)
	}
	return filepath.Join(d, "jarvis", "audit"), nil
}

// loadKey returns the chain key and where it is kept. The file wins when
// it exists (it was made when the keyring was unavailable); else the
// keyring's key. A new key is made only for a log with no keyed rows
// (create): a key that has gone missing, or a keyring that does not answer
// today, must not silently start a second chain.
func loadKey(dir string, ks KeyStore, create bool) ([]byte, string, error) {
	file := filepath.Join(dir, "key")
	if b, err := os.ReadFile(file); err == nil {
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(k) != 32 {
			return nil, "", fmt.Errorf("audit: %s does not hold a chain key", file)
		}
		return k, file, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("audit: chain key: %w", err)
	}
	var kerr error
	if ks != nil {
		v, err := ks.Get(KeyRef)
		if err == nil {
			k, err := hex.DecodeString(strings.TrimSpace(v))
			if err != nil || len(k) != 32 {
				return nil, "", fmt.Errorf("audit: the OS keyring's %q is not a chain key", KeyRef)
			}
			return k, "the OS keyring", nil
		}
		kerr = err
	}
	if !create {
		if kerr == nil {
			kerr = errors.New("no OS keyring")
		}
		return nil, "", fmt.Errorf("audit: the chain key of this log is not available: %s has none and the keyring has no %q (%v)", file, KeyRef, kerr)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, "", err
	}
	if ks != nil && ks.Set(KeyRef, hex.EncodeToString(k)) == nil {
		return k, "the OS keyring", nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("audit: chain key: %w", err)
	}
	if err := writeFileSync(file, []byte(hex.EncodeToString(k)+"\n")); err != nil {
		return nil, "", fmt.Errorf("audit: chain key: %w", err)
	}
	return k, file, nil
}

// anchor is the head of a log as last appended.
type anchor struct {
	LastID        int64  `json:"last_id"`
	LastHash      string `json:"last_hash"`
	LegacyThrough int64  `json:"legacy_through"`
	MAC           string `json:"mac"`
}

func (a anchor) mac(key []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "jarvis-audit-head\x00%d\x00%s\x00%d", a.LastID, a.LastHash, a.LegacyThrough)
	return hex.EncodeToString(m.Sum(nil))
}

// anchorPath is the anchor file of the log at path (absolute).
func anchorPath(dir, path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(dir, "head-"+hex.EncodeToString(h[:8])+".json")
}

// readAnchor returns the anchor, or ok false when there is none. An anchor
// whose MAC does not verify is an error.
func readAnchor(file string, key []byte) (a anchor, ok bool, err error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return a, false, nil
	}
	if err != nil {
		return a, false, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, false, fmt.Errorf("the head anchor %s is unreadable: %v", file, err)
	}
	if !hmac.Equal([]byte(a.MAC), []byte(a.mac(key))) {
		return a, false, fmt.Errorf("the head anchor %s does not verify under the chain key (forged, or another key)", file)
	}
	return a, true, nil
}

func writeAnchor(file string, key []byte, a anchor) error {
	a.MAC = a.mac(key)
	b, _ := json.Marshal(a)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return writeFileSync(file, append(b, '\n'))
}

// writeFileSync replaces file with data (mode 0600): temp file, fsync,
// rename, so a crash leaves the old content or the new, never a mix.
func writeFileSync(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
