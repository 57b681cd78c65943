package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"jarvis/tools"
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
	// License is the licence Jarvis is under (the repository's LICENSE);
	// Homepage and Issues, where it lives and where to report a problem.
	License  string `json:"license"`
	Homepage string `json:"homepage"`
	Issues   string `json:"issues"`
}

// Homepage is where Jarvis lives.
const Homepage = "https://github.com/jarvis-desktop/jarvis"

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
		SecretsFile: o.SecretsFile, AutostartSupported: o.AutostartDir != "",
		License: "MIT", Homepage: Homepage, Issues: Homepage + "/issues"}
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

// Diagnostics is the text "Copy diagnostics" puts on the clipboard for a
// problem report: the version, the system and kernel, the sandbox's
// protections here, where the service runs and whether a model is set up.
// Never a secret, a token, a path of the user's or the service's address.
func (a *App) Diagnostics() string {
	o := a.about
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (commit %s)\n", orDefault(o.Product, "Jarvis"), orDefault(o.Version, "unknown"), orDefault(o.Commit, "unknown"))
	fmt.Fprintf(&b, "System: %s (%s/%s)\n", osName(), runtime.GOOS, runtime.GOARCH)
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease") // empty where there is none: "unknown"
	fmt.Fprintf(&b, "Kernel: %s\n", orDefault(strings.TrimSpace(string(kernel)), "unknown"))
	if s, ok := a.tools.(interface{ Sandbox() tools.Sandbox }); ok {
		b.WriteString("Sandbox:\n")
		for _, p := range s.Sandbox().Protections() {
			mark := "held"
			if !p.Held {
				mark = "missing"
			}
			fmt.Fprintf(&b, "  %s: %s (%s)\n", p.Name, mark, p.By)
		}
	} else {
		b.WriteString("Sandbox: no tools in this window\n")
	}
	fmt.Fprintf(&b, "Service: %s\n", serviceKind(a.c.BaseURL()))
	model := "unknown (the service did not answer)"
	if p, err := a.Providers(); err == nil {
		model = "no"
		if p.Configured {
			model = "yes"
		}
	}
	fmt.Fprintf(&b, "Model set up: %s\n", model)
	return b.String()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// osName is the distribution's name (os-release's PRETTY_NAME), else the OS.
func osName() string {
	b, err := os.ReadFile("/etc/os-release")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				return strings.Trim(v, `"'`)
			}
		}
	}
	return runtime.GOOS
}

// serviceKind says where the service runs, without its address or port.
func serviceKind(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return "unknown"
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return "on this computer (loopback)"
	}
	return "on another computer"
}
