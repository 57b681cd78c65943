package crash

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
)

// TestFullDisk runs the service on a small tmpfs, fills it, and checks that
// writes fail with a clear error, reads keep working, and everything works
// and is sound again once space is freed. It needs root to mount a tmpfs:
// `make test` runs as root on CI machines; elsewhere it says why it skips.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	os.Mkdir(mnt, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", "-l", mnt).Run()
	bin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	defer up.Close()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, up.URL+"/v1")), 0o600)
	data := filepath.Join(mnt, "data")
	d := start(t, bin, data, cfg)
	defer func() { d.Kill() }()
	c := api.NewClient(d.URL, token, nil)
	ctx := context.Background()

	s, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, s.GeneralSessionID, "stored before the disk filled"); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "POST", "/v1/memory/write", api.MemoryWriteRequest{Target: "long_term", Content: "kept note"}, nil); err != nil {
		t.Fatal(err)
	}
	// Fill the disk.
	filler := filepath.Join(mnt, "filler")
	exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run()

	// Writes fail with a clear error, never a crash.
	var fails []error
	for i := 0; i < 30 && len(fails) < 3; i++ {
		err := c.Do(ctx, "POST", "/v1/memory/write", api.MemoryWriteRequest{Target: "daily", Content: strings.Repeat("x", 16<<10)}, nil)
		if err != nil {
			fails = append(fails, err)
		}
		if _, err := c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: fmt.Sprintf("full-%d", i)}); err != nil {
			fails = append(fails, err)
		}
	}
	if len(fails) == 0 {
		t.Fatal("no write failed on a full disk: the test did not fill it")
	}
	for _, err := range fails {
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != 507 || se.Err.Code != "disk_full" {
			t.Errorf("write on a full disk: %v (want 507 disk_full)", err)
		}
	}
	// Reads keep working.
	var tr api.Transcript
	if err := c.Do(ctx, "GET", "/v1/sessions/"+s.GeneralSessionID+"/messages", nil, &tr); err != nil || len(tr.Messages) != 2 {
		t.Fatalf("transcript on a full disk: %v %+v", err, tr)
	}
	var sr api.MemorySearchResponse
	if err := c.Do(ctx, "GET", "/v1/memory/search?q=kept", nil, &sr); err != nil || len(sr.Results) == 0 {
		t.Fatalf("memory search on a full disk: %v %+v", err, sr)
	}
	if _, err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	// Space freed: writes work again and nothing is corrupt.
	os.Remove(filler)
	if _, err := c.Chat(ctx, s.GeneralSessionID, "after the space came back"); err != nil {
		t.Fatalf("chat after freeing space: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/memory/write", api.MemoryWriteRequest{Target: "daily", Content: "after"}, nil); err != nil {
		t.Fatalf("memory write after freeing space: %v", err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "jarvis.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check %q %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(data, "memory", "MEMORY.md"))
	if !strings.Contains(string(b), "kept note") {
		t.Fatalf("MEMORY.md lost its note: %q", b)
	}
}
