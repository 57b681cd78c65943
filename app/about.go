package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// About is what the About view shows: the build, where things live, and the
// autostart setting.
type About struct {
	Product    string `json:"product"`
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	DataDir    string `json:"dataDir"`
	ConfigPath string `json:"configPath"`
	// SecretsFile is the fallback for API keys when no OS keyring answers.
	SecretsFile string `json:"secretsFile"`
	// AutostartSupported is false where no XDG autostart dir is known.
	AutostartSupported bool   `json:"autostartSupported"`
	Autostart          bool   `json:"autostart"`
	AutostartFile      string `json:"autostartFile,omitempty"`
}

// AboutOptions is the part of About main knows at start (Options.About).
type AboutOptions struct {
	Product, Version, Commit         string
	DataDir, ConfigPath, SecretsFile string
	// AutostartDir is the XDG autostart dir (~/.config/autostart); "" where
	// autostart is not supported.
	AutostartDir string
	// Executable is what the autostart entry starts.
	Executable string
}

// autostartName is the entry's file name in the autostart dir.
const autostartName = "jarvis.desktop"

// About reports the build, the paths and whether Jarvis starts at login.
func (a *App) About() About {
	o := a.about
	ab := About{Product: o.Product, Version: o.Version, Commit: o.Commit, DataDir: o.DataDir, ConfigPath: o.ConfigPath,
		SecretsFile: o.SecretsFile, AutostartSupported: o.AutostartDir != ""}
	if ab.AutostartSupported {
		ab.AutostartFile = filepath.Join(o.AutostartDir, autostartName)
		_, err := os.Stat(ab.AutostartFile)
		ab.Autostart = err == nil
	}
	return ab
}

// SetAutostart adds or removes the XDG autostart entry that starts Jarvis
// at login (opt-in: nothing is written until the user asks).
func (a *App) SetAutostart(on bool) (About, error) {
	o := a.about
	if o.AutostartDir == "" {
		return a.About(), errors.New("starting at login is supported on Linux desktops (XDG autostart) only")
	}
	path := filepath.Join(o.AutostartDir, autostartName)
	if !on {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return a.About(), fmt.Errorf("removing %s: %w", path, err)
		}
		a.log.Info("autostart at login turned off", "file", path)
		return a.About(), nil
	}
	if err := os.MkdirAll(o.AutostartDir, 0o755); err != nil {
		return a.About(), err
	}
	entry := "[Desktop Entry]\nType=Application\nName=" + o.Product +
		"\nComment=Start " + o.Product + " at login (turn this off in its About view)\nExec=" + execQuote(o.Executable) +
		"\nIcon=jarvis\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(entry), 0o644); err != nil {
		return a.About(), err
	}
	if err := os.Rename(tmp, path); err != nil {
		return a.About(), err
	}
	a.log.Info("autostart at login turned on", "file", path)
	return a.About(), nil
}

// execQuote quotes an argument for a desktop entry's Exec key: inside double
// quotes, ", `, $ and \ are escaped with a backslash; the key's own escaping
// then doubles each backslash.
func execQuote(arg string) string {
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`%") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		switch r {
		case '"', '`', '$', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return strings.NewReplacer(`\`, `\\`, "%", "%%").Replace(b.String())
}
