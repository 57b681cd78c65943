//go:build !windows

package service_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"jarvis/service"
	"jarvis/service/config"
)

// TestDataDirModesEnforcedAtStart: the data dir is 0700 and the databases,
// the token and the memory index 0600, whatever they were before the start
// (repaired), and a fresh start creates them so under a permissive umask.
func TestDataDirModesEnforcedAtStart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	files := []string{"jarvis.db", "memory-index.db", "token"}
	start := func() {
		t.Helper()
		if _, err := service.LoadToken(dir, func(string) string { return "" }); err != nil {
			t.Fatal(err)
		}
		svc, err := service.New(context.Background(), service.Options{DataDir: dir, Config: &config.Config{}, Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		svc.Close()
	}
	check := func(when string) {
		t.Helper()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: data dir: %v %v", when, fi.Mode(), err)
		}
		for _, f := range files {
			fi, err := os.Stat(filepath.Join(dir, f))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s: %v %v", when, f, fi.Mode(), err)
			}
		}
	}
	start()
	check("fresh start")
	os.Chmod(dir, 0o755)
	for _, f := range files {
		os.Chmod(filepath.Join(dir, f), 0o644)
	}
	start()
	check("restart after chmod")
}

// TestDataDirOfAnotherUserIsRefused: a data dir that belongs to another
// user is refused with a message that says so (its owner could read the
// token and rewrite the databases).
func TestDataDirOfAnotherUserIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := service.New(context.Background(), service.Options{DataDir: dir, Config: &config.Config{}, Token: "t"})
	if err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("New: %v", err)
	}
	if _, err := service.LoadToken(dir, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("LoadToken: %v", err)
	}
}
