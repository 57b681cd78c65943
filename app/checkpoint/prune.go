package checkpoint

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"jarvis/internal/reclaim"
)

// Retention caps what the store keeps. Zero values take the defaults.
type Retention struct {
	MaxBytes int64         `json:"max_bytes"` // default 1 GiB
	MaxAge   time.Duration `json:"max_age"`   // default 30 days
}

// Defaults fills the zero fields.
func (r Retention) Defaults() Retention {
	if r.MaxBytes <= 0 {
		r.MaxBytes = 1 << 30
	}
	if r.MaxAge <= 0 {
		r.MaxAge = 30 * 24 * time.Hour
	}
	return r
}

// Usage is what the store holds.
type Usage struct {
	Changes int   `json:"changes"`
	Bytes   int64 `json:"bytes"` // of the object store
}

// PruneReport says what Prune removed.
type PruneReport struct {
	Changes int   `json:"changes"` // checkpoints dropped
	Objects int   `json:"objects"` // stored contents removed
	Bytes   int64 `json:"bytes"`   // freed
	Usage
}

// Prune drops checkpoints older than the age cap, then the oldest ones
// until the stored contents fit the size cap, and removes the contents no
// remaining checkpoint refers to. A dropped checkpoint's turn can no longer
// be undone (its files are no longer listed). Pending changes are kept.
func (s *Store) Prune(ctx context.Context, r Retention) (PruneReport, error) {
	r = r.Defaults()
	var rep PruneReport
	cutoff := s.now().Add(-r.MaxAge).UTC().Format(time.RFC3339Nano)
	res, err := s.db.ExecContext(ctx, `DELETE FROM changes WHERE state != 'pending' AND time < ?`, cutoff)
	if err != nil {
		return rep, fmt.Errorf("checkpoint: %w", err)
	}
	n, _ := res.RowsAffected()
	rep.Changes += int(n)
	for {
		refs, err := s.referenced(ctx)
		if err != nil {
			return rep, err
		}
		freed, count, total, err := s.collect(refs)
		if err != nil {
			return rep, err
		}
		rep.Objects += count
		rep.Bytes += freed
		if total <= r.MaxBytes {
			rep.Usage.Bytes = total
			break
		}
		// The oldest turn goes whole: half a turn could not be undone.
		var id int64
		var turn string
		err = s.db.QueryRowContext(ctx, `SELECT id, turn_id FROM changes WHERE state != 'pending' ORDER BY id LIMIT 1`).Scan(&id, &turn)
		if err == sql.ErrNoRows {
			rep.Usage.Bytes = total // only pending changes left
			break
		}
		if err != nil {
			return rep, fmt.Errorf("checkpoint: %w", err)
		}
		res, err := s.db.ExecContext(ctx, `DELETE FROM changes WHERE state != 'pending' AND (id = ? OR (turn_id != '' AND turn_id = ?))`, id, turn)
		if err != nil {
			return rep, fmt.Errorf("checkpoint: %w", err)
		}
		n, _ := res.RowsAffected()
		rep.Changes += int(n)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM changes`).Scan(&rep.Usage.Changes); err != nil {
		return rep, fmt.Errorf("checkpoint: %w", err)
	}
	if rep.Changes > 0 {
		// The deleted rows' pages go back to the file system.
		if err := reclaim.Free(ctx, s.db); err != nil {
			return rep, fmt.Errorf("checkpoint: %w", err)
		}
	}
	return rep, nil
}

// referenced returns the objects any remaining change refers to.
func (s *Store) referenced(ctx context.Context) (map[string]bool, error) {
	// entries has no foreign-key enforcement without the pragma: drop the
	// orphans of deleted changes here.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM entries WHERE change_id NOT IN (SELECT id FROM changes)`); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT before, after FROM entries`)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer rows.Close()
	refs := map[string]bool{}
	var walk func(State)
	walk = func(st State) {
		if st.Object != "" {
			refs[st.Object] = true
		}
		for _, c := range st.Children {
			walk(c.State)
		}
	}
	for rows.Next() {
		var b, a string
		if err := rows.Scan(&b, &a); err != nil {
			return nil, err
		}
		for _, j := range []string{b, a} {
			var st State
			if j != "" && json.Unmarshal([]byte(j), &st) == nil {
				walk(st)
			}
		}
	}
	return refs, rows.Err()
}

// collect removes the objects not in refs and returns what it freed and
// the size of what remains.
func (s *Store) collect(refs map[string]bool) (freed int64, count int, total int64, err error) {
	root := filepath.Join(s.dir, "objects")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "tmp" {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if refs[d.Name()] {
			total += fi.Size()
			return nil
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		freed += fi.Size()
		count++
		return nil
	})
	return freed, count, total, err
}

// PruneTrash empties the trash folder dir by the same rules: entries older
// than the age cap go first, then the oldest until the rest fits the size
// cap. Each entry of dir is one deletion (its name starts with its time).
func PruneTrash(dir string, r Retention, now time.Time) (removed int, err error) {
	r = r.Defaults()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	type slot struct {
		name string
		mod  time.Time
		size int64
	}
	var slots []slot
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		var size int64
		filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if i, err := d.Info(); err == nil {
					size += i.Size()
				}
			}
			return nil
		})
		slots = append(slots, slot{e.Name(), fi.ModTime(), size})
		total += size
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i].name < slots[j].name }) // oldest first
	for _, sl := range slots {
		if now.Sub(sl.mod) <= r.MaxAge && total <= r.MaxBytes {
			break
		}
		if err := os.RemoveAll(filepath.Join(dir, sl.name)); err != nil {
			return removed, err
		}
		total -= sl.size
		removed++
	}
	return removed, nil
}

// Usage reports what the store holds now.
func (s *Store) Usage(ctx context.Context) (Usage, error) {
	var u Usage
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM changes`).Scan(&u.Changes); err != nil {
		return u, fmt.Errorf("checkpoint: %w", err)
	}
	err := filepath.WalkDir(filepath.Join(s.dir, "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				u.Bytes += fi.Size()
			}
		}
		return nil
	})
	return u, err
}
