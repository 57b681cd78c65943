package inbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnitFile: the unit runs the binary headless with the data dir, quoted
// the way systemd reads ExecStart, restarts after the window gives it way,
// and `systemd-analyze verify` accepts it.
func TestUnitFile(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin dir", "jarvis")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var calls []string
	o := UnitOptions{Dir: filepath.Join(dir, "units"), Exe: exe, Args: []string{"--data-dir", "/home/a b/100%$HOME"},
		Systemctl: func(args ...string) error { calls = append(calls, strings.Join(args, " ")); return nil }}
	path, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{
		`ExecStart="` + exe + `" --headless "--data-dir" "/home/a b/100%%$$HOME"`,
		"Restart=always", "RestartSec=60", "WantedBy=default.target", "Type=simple",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Join(calls, "; ") != "daemon-reload; enable --now "+UnitName || !Installed(o) {
		t.Fatalf("systemctl calls %q, installed %v", calls, Installed(o))
	}
	if sa, err := exec.LookPath("systemd-analyze"); err == nil {
		// Verified as a system unit: a user manager needs a login session
		// this test may not have; the unit's syntax is the same.
		out, err := exec.Command(sa, "verify", path).CombinedOutput()
		if err != nil || strings.Contains(string(out), UnitName) {
			t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, unit)
		}
	} else {
		t.Log("systemd-analyze is not installed: the unit's syntax was not verified by systemd")
	}
	calls = nil
	if err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if Installed(o) || strings.Join(calls, "; ") != "disable --now "+UnitName+"; daemon-reload" {
		t.Fatalf("after uninstall: installed %v, calls %q", Installed(o), calls)
	}
}
