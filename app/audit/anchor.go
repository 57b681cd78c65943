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
//
// The anchor also carries the newest row itself (and its prev_hash): it is
// the row's redo record. Append makes the anchor durable (one fdatasync of
// a file overwritten in place) and then commits the row without waiting for
// SQLite's own fsync; the log's write-ahead file is synced in the
// background and always before the next anchor replaces this one. A crash
// between the anchor and the row's durable commit leaves the log one row
// short of its anchor, and Open completes it from the anchor (rollForward):
// the row, HMAC-chained to the log's last one, is exactly the one Append
// wrote. Overwriting in place (no new file, no rename; anchors of one page,
// overwriteSync) is what makes the anchor cheap; a power cut in the middle
// of that write can tear it, which reads as an anchor that does not
// verify: Append then refuses (fail closed), never a row cut off unseen.

import (
	"bytes"
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
	"time"

	"jarvis/internal/fsperm"
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
	// Row and PrevHash: the row LastID itself, its redo record (the MAC
	// need not cover it: LastHash, an HMAC under the key, does).
	PrevHash string `json:"prev_hash,omitempty"`
	Row      *row   `json:"row,omitempty"`
}

// hasRedo reports whether the anchor holds row LastID chained to prev.
func (a anchor) hasRedo(key []byte, prev string) bool {
	_, ok := a.redo(key, prev)
	return ok
}

// redo returns the anchor's row, complete, when it is row LastID chained
// to prev under key: the row an append cut short by a crash did not commit.
func (a anchor) redo(key []byte, prev string) (row, bool) {
	if a.Row == nil || key == nil || a.PrevHash != prev || a.Row.ID != a.LastID {
		return row{}, false
	}
	r := *a.Row
	r.PrevHash = prev
	if !hmac.Equal([]byte(r.hash(key, prev)), []byte(a.LastHash)) {
		return row{}, false
	}
	r.Hash = a.LastHash
	return r, true
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
// whose MAC does not verify is an error. The anchor is overwritten in place
// while another Log (or process) appends, so a read can catch it half
// written: a failed read is tried again a few times before it counts.
func readAnchor(file string, key []byte) (a anchor, ok bool, err error) {
	for try := 0; ; try++ {
		a, ok, err = readAnchorOnce(file, key)
		if err == nil || try == 4 {
			return a, ok, err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func readAnchorOnce(file string, key []byte) (a anchor, ok bool, err error) {
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
	return overwriteSync(file, append(b, '\n'))
}

// overwriteSync replaces the content of an existing file of at most one
// page in place: data padded with spaces (JSON allows them) to the file's
// size, one write at offset 0 and an fdatasync. The file keeps its inode
// and its size, so the sync writes the data block alone: about a quarter
// of what a new file, its fsync and a rename cost. One page, because a
// write the kernel copies in one piece is all there or not at all when the
// process is killed; a missing file, or a larger one (an anchor holding a
// large row), is written whole by writeFileSync.
func overwriteSync(file string, data []byte) error {
	const page = 4096
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return writeFileSync(file, data)
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() > page || len(data) > page {
		f.Close()
		return writeFileSync(file, data)
	}
	if pad := int(fi.Size()) - len(data); pad > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, pad)...)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = datasync(f)
	}
	return errors.Join(err, f.Close())
}

// writeFileSync replaces file with data (mode 0600, fsperm.WriteFile: a
// crash leaves the old content or the new, never a mix), then syncs the
// folder, so that the rename itself is durable: the anchor's row may be the
// only durable copy when Append returns (and overwriteSync writes into the
// file the name now points to).
func writeFileSync(file string, data []byte) error {
	if err := fsperm.WriteFile(file, data); err != nil {
		return err
	}
	return fsperm.SyncDir(filepath.Dir(file))
}

// AnchorFile is where the head anchor of the log at logPath is kept in
// keyDir (a backup carries it beside the log, a restore puts it back here).
func AnchorFile(keyDir, logPath string) (string, error) {
	abs, err := filepath.Abs(logPath)
	if err != nil {
		return "", err
	}
	return anchorPath(keyDir, abs), nil
}
