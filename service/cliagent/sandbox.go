package cliagent

// Jarvis's sandbox (tools.Sandbox) around the CLIs whose own sandbox does
// not apply: claude (its OS sandbox is opt-in in its settings, and Jarvis
// does not turn it on) and pi (none) always, codex only in the full
// permission mode (where it runs with --dangerously-bypass-approvals-and-
// sandbox); in read-only and edit modes codex runs its commands in its own
// sandbox, which does not nest inside Jarvis's (it makes namespaces and
// Unix sockets of its own), so Jarvis leaves it alone.
//
// A confined CLI writes only in its working folder, a temporary folder of
// its own (TMPDIR, removed after the turn) and its state folders
// (StateFolders: where it keeps its login, settings and conversations);
// Jarvis's protected folders are out of its reach even inside those; it
// has the network (it needs its model provider), and no Unix socket and no
// process outside the sandbox.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"jarvis/service/cliopts"
	"jarvis/tools"
)

// OwnSandbox reports whether the CLI of kind, in permission mode mode,
// runs its tools in an OS sandbox of its own (so Jarvis's does not wrap
// it): codex outside the full mode.
func OwnSandbox(kind Kind, mode string) bool {
	return kind == KindCodex && mode != cliopts.PermFull
}

// StateFolders are the folders and the single files (in the home folder
// env's HOME names) the CLI of kind writes its own state to: its login,
// settings, conversations, caches and locks, as each CLI keeps them.
//
//   - claude: ~/.claude (or $CLAUDE_CONFIG_DIR: sign-in, settings,
//     conversations), ~/.claude.json (a file in the home folder itself,
//     for the versions that rewrite it in place; Claude Code 2.1 saves it
//     only by renaming ~/.claude.json.tmp.* over it, which the read-only
//     home refuses, and goes on without saving it), ~/.cache/claude,
//     ~/.cache/claude-cli-nodejs, ~/.local/state/claude (version and
//     sign-in locks).
//   - pi: ~/.pi (or $PI_CODING_AGENT_DIR).
//   - codex: ~/.codex (or $CODEX_HOME).
func StateFolders(kind Kind, env []string) (dirs, files []string, err error) {
	home := envValue(env, "HOME")
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return nil, nil, err
		}
	}
	if !filepath.IsAbs(home) {
		return nil, nil, errors.New("the home folder is not an absolute path")
	}
	// under is the folder the variable key names, else def in the home.
	under := func(key, def string) string {
		if v := envValue(env, key); filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(home, def)
	}
	switch kind {
	case KindClaude:
		if v := envValue(env, "CLAUDE_CONFIG_DIR"); filepath.IsAbs(v) {
			dirs = append(dirs, v) // .claude.json is then inside it
		} else {
			dirs = append(dirs, filepath.Join(home, ".claude"))
			files = append(files, filepath.Join(home, ".claude.json"))
		}
		cache, state := under("XDG_CACHE_HOME", ".cache"), under("XDG_STATE_HOME", filepath.Join(".local", "state"))
		dirs = append(dirs, filepath.Join(cache, "claude"), filepath.Join(cache, "claude-cli-nodejs"), filepath.Join(state, "claude"))
	case KindPi:
		dirs = append(dirs, under("PI_CODING_AGENT_DIR", ".pi"))
	case KindCodex:
		dirs = append(dirs, under("CODEX_HOME", ".codex"))
	}
	return dirs, files, nil
}

// confined reports whether the Runner starts its CLI in Jarvis's sandbox.
func (r *Runner) confined() bool {
	return r.opts.Sandbox != nil && !OwnSandbox(r.opts.Kind, r.opts.PermissionMode)
}

// Sandbox says in one line where the CLI runs, for the agent's status, the
// turn's status line and the audit rows of its tools: in its own sandbox,
// in Jarvis's (naming any protection that does not hold here, and
// "network allowed"), or in none.
func (r *Runner) Sandbox() string {
	switch {
	case OwnSandbox(r.opts.Kind, r.opts.PermissionMode):
		return "in its own sandbox (its commands write at most in the working folder, with no network)"
	case r.opts.Sandbox == nil:
		return "without Jarvis's sandbox: it can do whatever you can"
	}
	sb := *r.opts.Sandbox
	sb.Network = true
	d := sb.Describe()
	if rest, ok := strings.CutPrefix(d, "sandboxed "); ok {
		return "in Jarvis's sandbox " + rest
	}
	return "without a sandbox (this system has neither bubblewrap nor Landlock nor seccomp): it can do whatever you can"
}

// sandbox makes the state folders (claude's ~/.claude.json as an empty
// object: the sandbox can only let a file that exists be written) and the
// turn's temporary folder, and returns the sandbox of one run in dir and
// its temporary folder (the caller removes it).
func (r *Runner) sandbox(dir string, env []string) (tools.Sandbox, string, error) {
	dirs, files, err := StateFolders(r.opts.Kind, env)
	if err != nil {
		return tools.Sandbox{}, "", err
	}
	sb := *r.opts.Sandbox
	sb.Network = true
	sb.Writable = nil
	sb.WritableFiles = nil
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return tools.Sandbox{}, "", err
		}
		sb.Writable = append(sb.Writable, realPath(d))
	}
	for _, f := range files {
		if fh, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			fh.WriteString("{}\n")
			fh.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return tools.Sandbox{}, "", err
		}
		sb.WritableFiles = append(sb.WritableFiles, realPath(f))
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return tools.Sandbox{}, "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return tools.Sandbox{}, "", err
	}
	tmp, err := os.MkdirTemp("", "jarvis-"+strings.TrimSuffix(string(r.opts.Kind), "-cli")+"-")
	if err != nil {
		return tools.Sandbox{}, "", err
	}
	sb.Writable = append(sb.Writable, realPath(abs), realPath(tmp))
	return sb, tmp, nil
}

// realPath resolves symbolic links (a dotfiles ~/.claude linked into a
// repository): the sandbox grants the folder itself.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
