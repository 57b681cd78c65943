// Package backup owns the user's data taken away and put back: `jarvis
// backup FILE` (one consistent archive while Jarvis runs: SQLite's online
// backup of the conversations and of the audit log with its head anchor,
// the memory folder, the safety policy, the MCP pins, the service's agent
// and MCP configuration; never a secret), `jarvis restore [--force] FILE`
// (refuses to overwrite without --force; the audit chain is verified once
// the archive is back) and `jarvis export` (every conversation as Markdown
// or JSON, export.go).
//
// The archive is a gzip'd tar: manifest.json, then data/… (the data dir's
// files), config/… (the config files) and audit/anchor.json.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"jarvis/app/audit"
	"jarvis/internal/fsperm"
)

// Paths says where Jarvis keeps what a backup carries.
type Paths struct {
	DataDir     string // jarvis.db, audit.db, policy.json, mcp-state.json, memory/
	ConfigPath  string // the service's config file (agents, providers)
	MCPConfig   string // mcp.json
	AuditKeyDir string // the audit log's head anchor (and, without a keyring, its key: never copied)
}

// Databases are copied with SQLite's online backup; files as they are.
var (
	databases = []string{"jarvis.db", "audit.db"}
	dataFiles = []string{"policy.json", "mcp-state.json"}
	dataDirs  = []string{"memory"}
)

// Left out says what a backup never carries, and why; the output says it.
var LeftOut = []string{
	"secrets: model API keys, agents' keys and the audit chain's key stay in the system keyring (or its fallback file); copy the audit key separately (docs/guide/data.md)",
	"the service token (a new one is made on the new machine)",
	"checkpoints and trash of files Jarvis changed (they belong to this machine's folders)",
	"the memory search index (rebuilt from the memory folder)",
}

// Manifest is the archive's first entry.
type Manifest struct {
	Format    int      `json:"format"` // 1
	CreatedAt string   `json:"created_at"`
	Files     []string `json:"files"` // archive names, manifest excluded
	LeftOut   []string `json:"left_out"`
}

const manifestName = "manifest.json"
const anchorName = "audit/anchor.json"

// Backup writes the archive of p to out (created, never overwritten) and
// returns its manifest. It is consistent while Jarvis runs: each database
// is copied by SQLite's online backup, the audit log with the anchor that
// matches the copy.
func Backup(ctx context.Context, p Paths, out string) (Manifest, error) {
	m := Manifest{Format: 1, CreatedAt: time.Now().UTC().Format(time.RFC3339), LeftOut: LeftOut}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".jarvis-backup-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(tmp)
	type entry struct{ name, src string }
	var entries []entry
	for _, db := range databases {
		src := filepath.Join(p.DataDir, db)
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		dst := filepath.Join(tmp, db)
		if db == "audit.db" {
			anchor, err := backupAudit(ctx, p, src, dst)
			if err != nil {
				return m, fmt.Errorf("the audit log: %w", err)
			}
			if anchor != "" {
				a := filepath.Join(tmp, "anchor.json")
				if err := os.WriteFile(a, []byte(anchor), 0o600); err != nil {
					return m, err
				}
				entries = append(entries, entry{anchorName, a})
			}
		} else if err := onlineBackup(ctx, src, dst); err != nil {
			return m, fmt.Errorf("%s: %w", db, err)
		}
		entries = append(entries, entry{"data/" + db, dst})
	}
	for _, f := range dataFiles {
		entries = append(entries, entry{"data/" + f, filepath.Join(p.DataDir, f)})
	}
	for _, d := range dataDirs {
		root := filepath.Join(p.DataDir, d)
		err := filepath.WalkDir(root, func(fp string, de fs.DirEntry, err error) error {
			if err != nil || !de.Type().IsRegular() {
				return err
			}
			rel, err := filepath.Rel(p.DataDir, fp)
			if err != nil {
				return err
			}
			entries = append(entries, entry{"data/" + filepath.ToSlash(rel), fp})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
	}
	for name, f := range map[string]string{"config/config.json": p.ConfigPath, "config/mcp.json": p.MCPConfig} {
		if f != "" {
			entries = append(entries, entry{name, f})
		}
	}
	var kept []entry
	for _, e := range entries {
		if _, err := os.Stat(e.src); err == nil {
			kept = append(kept, e)
			m.Files = append(m.Files, e.name)
		}
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return m, fmt.Errorf("%s already exists: choose a new file name", out)
		}
		return m, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(out)
		}
	}()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := addBytes(tw, manifestName, raw); err != nil {
		return m, err
	}
	for _, e := range kept {
		if err := addFile(tw, e.name, e.src); err != nil {
			return m, err
		}
	}
	if err := errors.Join(tw.Close(), zw.Close(), f.Sync(), f.Close()); err != nil {
		return m, err
	}
	done = true
	return m, nil
}

// backupAudit copies the audit log and returns the head anchor that goes
// with the copy. It holds the log's write lock meanwhile (an append waits a
// moment): an append writes its anchor inside its transaction, before its
// commit, so the anchor read under the lock is the copy's head, or one row
// ahead of it, which the log completes from the anchor when it is opened.
func backupAudit(ctx context.Context, p Paths, src, dst string) (string, error) {
	file, err := audit.AnchorFile(p.AuditKeyDir, src)
	if err != nil {
		return "", err
	}
	ldb, err := sql.Open("sqlite3", audit.DSN(src, "_txlock=immediate&_busy_timeout=10000"))
	if err != nil {
		return "", err
	}
	defer ldb.Close()
	lock, err := ldb.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer lock.Rollback()
	// BEGIN IMMEDIATE takes the lock at once.
	if err := onlineBackup(ctx, src, dst); err != nil {
		return "", err
	}
	anchor, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // a log that never had a row
	}
	if err != nil {
		return "", err
	}
	if !json.Valid(anchor) {
		return "", errors.New("its head anchor is not readable")
	}
	return string(anchor), nil
}

// onlineBackup copies the SQLite database src to dst (a new file) with
// SQLite's online backup: a consistent copy while other connections write.
func onlineBackup(ctx context.Context, src, dst string) error {
	sdb, err := sql.Open("sqlite3", audit.DSN(src, "mode=ro&_busy_timeout=10000"))
	if err != nil {
		return err
	}
	defer sdb.Close()
	ddb, err := sql.Open("sqlite3", audit.DSN(dst, "_busy_timeout=10000"))
	if err != nil {
		return err
	}
	defer ddb.Close()
	sc, err := sdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	dc, err := ddb.Conn(ctx)
	if err != nil {
		return err
	}
	defer dc.Close()
	err = dc.Raw(func(d any) error {
		return sc.Raw(func(s any) error {
			b, err := d.(*sqlite3.SQLiteConn).Backup("main", s.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			// Step(-1) copies every page under one read of the source.
			if _, err := b.Step(-1); err != nil {
				b.Finish()
				return err
			}
			return b.Finish()
		})
	})
	if err != nil {
		return err
	}
	// One file, no write-ahead log beside it.
	_, err = dc.ExecContext(ctx, `PRAGMA journal_mode = DELETE`)
	return err
}

func addBytes(tw *tar.Writer, name string, b []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: time.Now(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}

func addFile(tw *tar.Writer, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, fi.Size())
	return err
}

// Restored says what a restore put back.
type Restored struct {
	Manifest Manifest
	Files    []string // where each file went
}

// Restore puts the archive in back where p says. Without force it refuses
// when any of those files already exists, and changes nothing. Jarvis must
// not be running.
func Restore(ctx context.Context, p Paths, in string, force bool) (Restored, error) {
	var r Restored
	f, err := os.Open(in)
	if err != nil {
		return r, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return r, fmt.Errorf("%s is not a Jarvis backup: %w", in, err)
	}
	tr := tar.NewReader(zr)
	// Read it all first: nothing is written unless the whole archive reads.
	files := map[string][]byte{}
	var order []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r, fmt.Errorf("%s is damaged: %w", in, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return r, fmt.Errorf("%s is damaged: %w", in, err)
		}
		files[h.Name] = b
		order = append(order, h.Name)
	}
	raw, ok := files[manifestName]
	if !ok || json.Unmarshal(raw, &r.Manifest) != nil || r.Manifest.Format != 1 {
		return r, fmt.Errorf("%s is not a Jarvis backup (it has no manifest this version reads)", in)
	}
	dest := map[string]string{}
	for _, name := range order {
		if name == manifestName {
			continue
		}
		to, err := target(p, name)
		if err != nil {
			return r, fmt.Errorf("%s: %w", in, err)
		}
		dest[name] = to
	}
	if !force {
		var there []string
		for _, to := range dest {
			if _, err := os.Stat(to); err == nil {
				there = append(there, to)
			}
		}
		if len(there) > 0 {
			return r, fmt.Errorf("%d file(s) would be replaced, %s among them: restore with --force to replace them", len(there), there[0])
		}
	}
	for _, name := range order {
		to, ok := dest[name]
		if !ok {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return r, err
		}
		if strings.HasSuffix(to, ".db") {
			// The old database's write-ahead log must not be replayed over the new one.
			os.Remove(to + "-wal")
			os.Remove(to + "-shm")
		}
		if err := fsperm.WriteFile(to, files[name]); err != nil {
			return r, err
		}
		r.Files = append(r.Files, to)
	}
	return r, nil
}

// target is where an archive name goes; names outside the known folders
// are refused.
func target(p Paths, name string) (string, error) {
	clean := path.Clean(name)
	if clean != name || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
		return "", fmt.Errorf("the entry %q is not a path a backup makes", name)
	}
	switch {
	case name == anchorName:
		return audit.AnchorFile(p.AuditKeyDir, filepath.Join(p.DataDir, "audit.db"))
	case name == "config/config.json" && p.ConfigPath != "":
		return p.ConfigPath, nil
	case name == "config/mcp.json" && p.MCPConfig != "":
		return p.MCPConfig, nil
	case strings.HasPrefix(name, "data/"):
		return filepath.Join(p.DataDir, filepath.FromSlash(strings.TrimPrefix(name, "data/"))), nil
	}
	return "", fmt.Errorf("the entry %q is not a path a backup makes", name)
}
