package instance_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"jarvis/internal/instance"
)

// TestHelperHoldLock is the other process of TestSecondProcessRefused: it
// takes the lock, says so, and holds it until its stdin closes.
func TestHelperHoldLock(t *testing.T) {
	dir := os.Getenv("INSTANCE_TEST_DIR")
	if dir == "" {
		t.Skip("helper process")
	}
	l, err := instance.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	os.Stdout.WriteString("locked\n")
	buf := make([]byte, 1)
	os.Stdin.Read(buf)
}

// A second process on the same data dir is refused, told the first one's
// pid; once the first exits the lock is free again.
func TestSecondProcessRefused(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "INSTANCE_TEST_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	_, err = instance.Acquire(dir)
	if !errors.Is(err, instance.ErrRunning) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("second Acquire: %v", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	l, err := instance.Acquire(dir)
	if err != nil {
		t.Fatalf("after the first exited: %v", err)
	}
	l.Release()
	// Another data dir is another instance.
	other, err := instance.Acquire(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other.Release()
}

func TestUniqueID(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if instance.UniqueID(a) != instance.UniqueID(filepath.Join(a, ".", "x", "..")) {
		t.Fatal("the same dir gave two ids")
	}
	if instance.UniqueID(a) == instance.UniqueID(b) {
		t.Fatal("two dirs gave one id")
	}
	if id := instance.UniqueID(a); !strings.HasPrefix(id, "jarvis-") || strings.ContainsAny(id, "./") {
		t.Fatalf("id %q", id)
	}
}
