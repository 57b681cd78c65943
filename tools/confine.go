package tools

// The sandbox of every program Jarvis starts on an agent's behalf:
// run_command (and so ACP terminals), MCP stdio servers, and the CLI
// coding agents whose own sandbox does not apply (service/cliagent, with
// the network and their state folders). A program cannot be undone (no
// checkpoint covers what it does), so it runs inside up to three kernel
// mechanisms, each checked by the escape tests of
// confine_linux_test.go:
//
//   - bubblewrap (Debian's bwrap), when it is installed and works here: a
//     mount namespace where the whole file system is read-only except the
//     writable folders (the workspace, the program's own temporary folder),
//     Jarvis's protected folders (config, data, audit key, trash,
//     checkpoints) are hidden under an empty read-only folder even inside
//     the workspace, and the folders between a writable folder and a
//     protected one are mount points, so they cannot be renamed away; a pid
//     namespace (no process outside can be seen or signalled) and, unless
//     network was allowed, a network namespace of its own (no loopback of
//     the host, no abstract Unix sockets).
//   - Landlock, applied by the helper (package confine: the small
//     jarvis-confine binary next to jarvis, or else the jarvis binary's
//     hidden "__confine" subcommand, see SmallHelper) to its own thread
//     before it execs the program from it: writes only in the writable folders and /dev/null, no TCP
//     connect or bind unless network was allowed (ABI 4+), no abstract Unix
//     socket and no signal outside the sandbox (ABI 6+), no ptrace outside
//     (every ABI).
//   - a seccomp filter, applied by the same helper: socket(2) of the Unix
//     family is refused, so no pathname or abstract Unix socket (session
//     bus, ssh-agent, docker.sock, Jarvis's jarvis.sock) can be reached
//     (a read-only folder does not stop connect(2) to a socket in it);
//     without network, every family but netlink is refused (UDP too, which
//     Landlock before ABI 10 does not cover); io_uring, which could open
//     sockets past the filter, is refused.
//
// Where a mechanism is missing, the protections it alone gives are
// reported missing (Sandbox.Protections), and the prompt says which: a
// protection is never claimed when nothing here holds it.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"jarvis/tools/confine"
)

// ConfineSubcommand is the jarvis binary's hidden subcommand that runs
// ConfineMain.
const ConfineSubcommand = "__confine"

// ThisBinarysHelper is the helper argv of the running binary (jarvis or
// jarvis-service): its hidden subcommand (NewSandbox takes jarvis-confine
// beside it instead when it is there); nil (unconfined, and said so) when
// the binary cannot name itself.
func ThisBinarysHelper(log *slog.Logger) []string {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("started programs will not be confined: the binary cannot find itself", "err", err)
		return nil
	}
	return []string{exe, ConfineSubcommand}
}

// Sandbox is how one program is started confined. The zero value confines
// nothing.
type Sandbox struct {
	// Helper is the argv prefix of the process that applies Landlock and
	// the seccomp filter and execs the program (ConfineMain); empty:
	// neither applies.
	Helper []string
	// Bwrap is bubblewrap's path (Bubblewrap finds it); empty: none.
	Bwrap string
	// Writable are the absolute folders the program may write: the
	// workspace (or an MCP server's folder) and its temporary folder.
	Writable []string
	// ReadOnly are absolute files or folders inside Writable ones that the
	// program may read but not change: a coding agent's own settings,
	// hooks and extensions in its state folder, which would run outside
	// the sandbox the next time you start that agent yourself. Held by
	// bubblewrap only (read-only binds over the writable folder); those
	// that do not exist are skipped.
	ReadOnly []string
	// Protected are absolute folders it must never write, nor read (with
	// bubblewrap): Jarvis's config, data, audit key, trash, checkpoints.
	Protected []string
	// Network lets it reach the network.
	Network bool
}

// NewSandbox is the sandbox of the programs started through helper (the
// small jarvis-confine where it is installed, SmallHelper), with bubblewrap
// where it works here, keeping the protected folders out of reach; the
// caller sets Writable and Network per program. Where the helper cannot
// confine (not Linux) it is left out, so programs still start, and the
// sandbox says it holds nothing.
func NewSandbox(helper, protected []string) Sandbox {
	bwrap, _ := Bubblewrap()
	if runtime.GOOS != "linux" {
		helper = nil
	}
	return Sandbox{Helper: SmallHelper(helper), Bwrap: bwrap, Protected: protected}
}

// Protection is one promise of the sandbox, and whether it holds here.
type Protection struct {
	Name string `json:"name"`
	Held bool   `json:"held"`
	// By names the mechanisms that hold it, or why it does not hold.
	By string `json:"by"`
}

// Mechanisms says which of the kernel mechanisms the sandbox applies.
func (s Sandbox) mechanisms() (bwrap bool, landlock int, seccomp bool) {
	if s.Bwrap != "" {
		bwrap = true
	}
	if len(s.Helper) > 0 {
		landlock, seccomp = landlockABI(), seccompAvailable()
	}
	return
}

// Protections lists what the sandbox promises and whether each holds.
func (s Sandbox) Protections() []Protection {
	bw, ll, sc := s.mechanisms()
	by := func(names ...string) string { return strings.Join(names, " and ") }
	var out []Protection
	add := func(name string, missing string, mechs ...string) {
		var have []string
		for _, m := range mechs {
			if m != "" {
				have = append(have, m)
			}
		}
		if len(have) > 0 {
			out = append(out, Protection{Name: name, Held: true, By: by(have...)})
		} else {
			out = append(out, Protection{Name: name, By: missing})
		}
	}
	pick := func(ok bool, name string) string {
		if ok {
			return name
		}
		return ""
	}
	llName := "Landlock"
	if ll > 0 {
		llName = "Landlock ABI " + strconv.Itoa(ll)
	}
	add("writes only in its folders", "no bubblewrap and no Landlock here", pick(bw, "bubblewrap"), pick(ll > 0, llName))
	add("Jarvis's own folders out of reach", "needs bubblewrap, missing here", pick(bw, "bubblewrap"))
	if !s.Network {
		add("no network", "no bubblewrap and no seccomp filter here", pick(bw, "bubblewrap"), pick(sc, "seccomp"), pick(ll >= 4, llName+" (TCP)"))
	}
	add("no Unix sockets", "needs the seccomp filter, missing here", pick(sc, "seccomp"), pick(ll >= 6, llName+" (abstract)"))
	add("no signals or tracing outside", "no bubblewrap and no Landlock ABI 6 here", pick(bw, "bubblewrap"), pick(ll >= 6, llName))
	return out
}

// Confined reports whether every protection holds.
func (s Sandbox) Confined() bool {
	for _, p := range s.Protections() {
		if !p.Held {
			return false
		}
	}
	return true
}

// Describe is the sandbox in one line, for prompts, cards and audit rows:
// "sandboxed (bubblewrap, Landlock ABI 7, seccomp), no network" (or
// "network allowed") or what
// is missing.
func (s Sandbox) Describe() string {
	bw, ll, sc := s.mechanisms()
	var mechs []string
	if bw {
		mechs = append(mechs, "bubblewrap")
	}
	if ll > 0 {
		mechs = append(mechs, "Landlock ABI "+strconv.Itoa(ll))
	}
	if sc {
		mechs = append(mechs, "seccomp")
	}
	net := "no network"
	if s.Network {
		net = "network allowed"
	}
	if len(mechs) == 0 {
		return "not sandboxed: it can do whatever you can, network included"
	}
	d := "sandboxed (" + strings.Join(mechs, ", ") + "), " + net
	var missing []string
	for _, p := range s.Protections() {
		if !p.Held {
			missing = append(missing, p.Name+" ("+p.By+")")
		}
	}
	if len(missing) > 0 {
		d += "; NOT held: " + strings.Join(missing, "; ")
	}
	return d
}

// Command returns the command that starts path with args inside the
// sandbox, in dir. Its process group is its own (procstop.SetGroup is the
// caller's).
func (s Sandbox) Command(path string, args []string, dir string) *exec.Cmd {
	argv := []string{path}
	argv = append(argv, args...)
	if len(s.Helper) > 0 {
		h := append([]string{}, s.Helper...)
		for _, w := range s.Writable {
			h = append(h, "--rw", w)
		}
		if s.Network {
			h = append(h, "--net")
		}
		argv = append(append(h, "--"), argv...)
	}
	if s.Bwrap != "" {
		argv = append(append([]string{s.Bwrap}, s.bwrapArgs(dir)...), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	return cmd
}

// bwrapArgs lays out the mount namespace; see the package comment above.
func (s Sandbox) bwrapArgs(dir string) []string {
	a := []string{"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if !s.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	type mnt struct {
		path string
		args []string
	}
	var ms []mnt
	for _, w := range s.Writable {
		ms = append(ms, mnt{w, []string{"--bind", w, w}})
	}
	for _, r := range s.ReadOnly {
		if _, err := os.Lstat(r); err == nil {
			ms = append(ms, mnt{r, []string{"--ro-bind", r, r}})
		}
	}
	var hidden []string
	for _, p := range s.Protected {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue // nothing there to hide; a missing folder is not Jarvis's yet
		}
		hidden = append(hidden, p)
		ms = append(ms, mnt{p, []string{"--tmpfs", p}})
		// The folders between a writable one and p are mount points, which
		// cannot be renamed (EBUSY): a program cannot move p's parent away
		// and put a folder of its own where Jarvis looks.
		for _, w := range s.Writable {
			rel, ok := within(w, p)
			if !ok || rel == "." {
				continue
			}
			parts := strings.Split(rel, string(filepath.Separator))
			for i := 1; i < len(parts); i++ {
				anc := filepath.Join(append([]string{w}, parts[:i]...)...)
				ms = append(ms, mnt{anc, []string{"--bind", anc, anc}})
			}
		}
	}
	// A mount must come after the mounts of the folders above it.
	sort.SliceStable(ms, func(i, j int) bool { return depth(ms[i].path) < depth(ms[j].path) })
	seen := map[string]bool{}
	for _, m := range ms {
		key := strings.Join(m.args, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		a = append(a, m.args...)
	}
	for _, h := range hidden {
		a = append(a, "--remount-ro", h)
	}
	if dir != "" {
		a = append(a, "--chdir", dir)
	}
	return append(a, "--")
}

func depth(p string) int { return strings.Count(filepath.Clean(p), string(filepath.Separator)) }

var (
	bwrapOnce sync.Once
	bwrapPath string
	bwrapErr  error
)

// Bubblewrap returns bubblewrap's path when it is installed and can make
// the namespaces the sandbox needs here (a container may forbid them);
// otherwise "" and why not. The answer is found once per process.
func Bubblewrap() (string, error) {
	bwrapOnce.Do(func() {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			bwrapErr = errors.New("bubblewrap (bwrap) is not installed")
			return
		}
		s := Sandbox{Bwrap: p, Writable: []string{os.TempDir()}}
		tr, err := exec.LookPath("true")
		if err != nil {
			bwrapErr = err
			return
		}
		cmd := s.Command(tr, nil, "/")
		if out, err := cmd.CombinedOutput(); err != nil {
			bwrapErr = fmt.Errorf("bubblewrap cannot make its namespaces here: %v: %s", err, strings.TrimSpace(string(out)))
			return
		}
		bwrapPath = p
	})
	return bwrapPath, bwrapErr
}

// ConfineMain is the helper (confine.Main) as the jarvis binary's hidden
// subcommand: args are "--rw DIR"… ["--net"] "--" PROGRAM ARG…. It
// returns only on failure.
func ConfineMain(args []string) error { return confine.Main(args, os.Environ()) }

// HelperName is the small confinement helper's file name (cmd/jarvis-confine),
// installed next to the jarvis binary.
const HelperName = "jarvis-confine"

// SmallHelper returns the helper argv to start programs through: the
// small jarvis-confine next to exe when it is there (it starts in about a
// millisecond), otherwise exe's own hidden subcommand (the same
// confinement, but each start first loads the whole jarvis binary). A
// helper that is not `EXE __confine` is returned as it is.
func SmallHelper(helper []string) []string {
	if len(helper) != 2 || helper[1] != ConfineSubcommand {
		return helper
	}
	small := filepath.Join(filepath.Dir(helper[0]), HelperName)
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{small}
	}
	return helper
}
