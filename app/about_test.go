package app

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The autostart entry is opt-in: absent until turned on, a valid desktop
// entry (checked by desktop-file-validate when installed) that starts this
// binary, and gone when turned off.
func TestAutostartEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "autostart")
	exe := filepath.Join(t.TempDir(), "my apps", "jarvis")
	a := &App{about: AboutOptions{Product: "Jarvis", Version: "1.2.3", Commit: "abc1234", AutostartDir: dir, Executable: exe}, log: slog.New(slog.DiscardHandler)}
	ab := a.About()
	if !ab.AutostartSupported || ab.Autostart || ab.Version != "1.2.3" || ab.Commit != "abc1234" {
		t.Fatalf("before: %+v", ab)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the autostart dir was created before the user asked")
	}
	ab, err := a.SetAutostart(true)
	if err != nil || !ab.Autostart {
		t.Fatalf("on: %+v %v", ab, err)
	}
	b, err := os.ReadFile(ab.AutostartFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `Exec="`+exe+`"`) || !strings.HasPrefix(string(b), "[Desktop Entry]\n") {
		t.Fatalf("entry:\n%s", b)
	}
	if v, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(v, ab.AutostartFile).CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("desktop-file-validate: %v\n%s", err, out)
		}
	} else {
		t.Log("desktop-file-validate not installed (scripts/setup.sh installs desktop-file-utils)")
	}
	ab, err = a.SetAutostart(false)
	if err != nil || ab.Autostart {
		t.Fatalf("off: %+v %v", ab, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "jarvis.desktop")); !os.IsNotExist(err) {
		t.Fatalf("entry still there: %v", err)
	}
	// Where autostart is unknown the setting says so.
	b2 := &App{about: AboutOptions{Product: "Jarvis"}, log: slog.New(slog.DiscardHandler)}
	if _, err := b2.SetAutostart(true); err == nil || b2.About().AutostartSupported {
		t.Fatal("autostart without a dir")
	}
}

func TestExecQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/jarvis":     "/usr/bin/jarvis",
		"/opt/my apps/jarvis": `"/opt/my apps/jarvis"`,
		`/a"b$c`:              `"/a\\"b\\$c"`,
		"/x%y":                `"/x%%y"`,
	} {
		if got := execQuote(in); got != want {
			t.Errorf("execQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
