package inbox

// "Run tasks when Jarvis is closed": a systemd user unit that runs `jarvis
// --headless` (the policy-only gate, the scheduler, approvals that wait in
// the Inbox). While the window is open it holds the data dir, and the
// headless process asked by the window stops; the unit starts it again a
// minute later, and it exits at once while the window still runs.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"jarvis/internal/fsperm"
)

// UnitName is the systemd user unit's name.
const UnitName = "jarvis-tasks.service"

// UnitOptions say where the unit goes and what it runs.
type UnitOptions struct {
	// Dir is the user units' folder (default $XDG_CONFIG_HOME/systemd/user).
	Dir string
	// Exe is the jarvis binary; Args follow --headless (--data-dir …).
	Exe  string
	Args []string
	// Systemctl runs `systemctl --user ARGS`; nil: the real one.
	Systemctl func(args ...string) error
}

func (o UnitOptions) dir() (string, error) {
	if o.Dir != "" {
		return o.Dir, nil
	}
	c, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "systemd", "user"), nil
}

func (o UnitOptions) systemctl(args ...string) error {
	if o.Systemctl != nil {
		return o.Systemctl(args...)
	}
	out, err := exec.Command("systemctl", append([]string{"--user"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl --user %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Unit is the unit file's text.
func Unit(exe string, args []string) string {
	cmd := []string{quote(exe), "--headless"}
	for _, a := range args {
		cmd = append(cmd, quote(a))
	}
	return `# Written by Jarvis ("Run tasks when Jarvis is closed"); removed when you turn it off.
[Unit]
Description=Jarvis: scheduled tasks while the window is closed
After=default.target

[Service]
Type=simple
ExecStart=` + strings.Join(cmd, " ") + `
# The window takes over while it is open; this starts again after it closes.
Restart=always
RestartSec=60

[Install]
WantedBy=default.target
`
}

// quote is one argument as systemd's ExecStart reads it: double-quoted,
// backslashes and quotes escaped, % and $ doubled (no specifiers, no
// variables).
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// Installed says whether the unit file is in place.
func Installed(o UnitOptions) bool {
	d, err := o.dir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(d, UnitName))
	return err == nil
}

// Install writes the unit and enables and starts it (while the window
// runs, the headless process exits at once and the unit retries a minute
// later).
func Install(o UnitOptions) (string, error) {
	if o.Exe == "" {
		return "", errors.New("Jarvis cannot find its own program to run it in the background")
	}
	d, err := o.dir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(d, UnitName)
	if err := fsperm.WriteFile(path, []byte(Unit(o.Exe, o.Args))); err != nil {
		return "", err
	}
	if err := o.systemctl("daemon-reload"); err != nil {
		return path, err
	}
	return path, o.systemctl("enable", "--now", UnitName)
}

// Uninstall disables the unit and removes its file.
func Uninstall(o UnitOptions) error {
	d, err := o.dir()
	if err != nil {
		return err
	}
	path := filepath.Join(d, UnitName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	disableErr := o.systemctl("disable", "--now", UnitName)
	if err := os.Remove(path); err != nil {
		return err
	}
	return errors.Join(disableErr, o.systemctl("daemon-reload"))
}
