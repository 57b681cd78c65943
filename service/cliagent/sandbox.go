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

// StateFolders are the folders (in the home folder env's HOME names) the
// CLI of kind writes its own state to: its login, settings, conversations,
// caches and locks, as each CLI keeps them.
//
//   - claude: ~/.claude (or $CLAUDE_CONFIG_DIR: sign-in, settings,
//     conversations), ~/.cache/claude, ~/.cache/claude-cli-nodejs,
//     ~/.local/state/claude (version and sign-in locks). ~/.claude.json,
//     a file in the home folder itself, stays read-only: it names the MCP
//     servers claude starts (Claude Code 2.1 saves it only by renaming a
//     new file over it, and goes on without saving it).
//   - pi: ~/.pi (or $PI_CODING_AGENT_DIR).
//   - codex: ~/.codex (or $CODEX_HOME).
//
// kept are the files and folders inside them that stay read-only (Kept).
func StateFolders(kind Kind, env []string) (dirs []string, kept []Kept, err error) {
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
			dirs = append(dirs, v)
		} else {
			dirs = append(dirs, filepath.Join(home, ".claude"))
		}
		c := dirs[0]
		kept = append(kept, Kept{filepath.Join(c, "settings.json"), "{}\n"}, Kept{Path: filepath.Join(c, ".claude.json")},
			Kept{Path: filepath.Join(c, "CLAUDE.md")}, Kept{Path: filepath.Join(c, "plugins")}, Kept{Path: filepath.Join(c, "agents")},
			Kept{Path: filepath.Join(c, "commands")}, Kept{Path: filepath.Join(c, "skills")})
		cache, state := under("XDG_CACHE_HOME", ".cache"), under("XDG_STATE_HOME", filepath.Join(".local", "state"))
		dirs = append(dirs, filepath.Join(cache, "claude"), filepath.Join(cache, "claude-cli-nodejs"), filepath.Join(state, "claude"))
	case KindPi:
		agent := filepath.Join(home, ".pi", "agent")
		if v := envValue(env, "PI_CODING_AGENT_DIR"); filepath.IsAbs(v) {
			dirs, agent = append(dirs, v), v
		} else {
			dirs = append(dirs, filepath.Join(home, ".pi"))
		}
		kept = append(kept, Kept{filepath.Join(agent, "settings.json"), "{}\n"}, Kept{filepath.Join(agent, "extensions"), "/"},
			Kept{Path: filepath.Join(agent, "models.json")}, Kept{Path: filepath.Join(agent, "AGENTS.md")},
			Kept{Path: filepath.Join(agent, "skills")}, Kept{Path: filepath.Join(agent, "prompts")})
	case KindCodex:
		c := under("CODEX_HOME", ".codex")
		dirs = append(dirs, c)
		kept = append(kept, Kept{filepath.Join(c, "config.toml"), "\n"}, Kept{filepath.Join(c, "rules"), "/"},
			Kept{Path: filepath.Join(c, "AGENTS.md")})
	}
	return dirs, kept, nil
}

// Kept is a file or folder in a CLI's state folder that stays read-only
// in Jarvis's sandbox: its settings (hooks, permissions, the MCP servers
// and commands it starts), extensions and instructions, which would act
// outside the sandbox the next time you start that CLI yourself. A kept
// path that does not exist yet is made with Make ("/": an empty folder;
// else the file's content) so the agent cannot create it; with Make ""
// it is left missing.
type Kept struct {
	Path string
	Make string
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
		if sb.Bwrap == "" {
			rest += "; its own settings are writable (no bubblewrap)"
		}
		return "in Jarvis's sandbox " + rest
	}
	return "without a sandbox (this system has neither bubblewrap nor Landlock nor seccomp): it can do whatever you can"
}

// sandbox makes the state folders and the kept settings that are missing
// (Kept.Make) and the turn's temporary folder, and returns the sandbox of
// one run in dir and its temporary folder (the caller removes it).
func (r *Runner) sandbox(dir string, env []string) (tools.Sandbox, string, error) {
	dirs, kept, err := StateFolders(r.opts.Kind, env)
	if err != nil {
		return tools.Sandbox{}, "", err
	}
	sb := *r.opts.Sandbox
	sb.Network = true
	sb.Writable = nil
	sb.ReadOnly = nil
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return tools.Sandbox{}, "", err
		}
		sb.Writable = append(sb.Writable, realPath(d))
	}
	for _, k := range kept {
		if err := k.make(); err != nil {
			return tools.Sandbox{}, "", err
		}
		sb.ReadOnly = append(sb.ReadOnly, filepath.Join(realPath(filepath.Dir(k.Path)), filepath.Base(k.Path)))
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

// make creates k's path when it is missing and k says how.
func (k Kept) make() error {
	if k.Make == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(k.Path), 0o700); err != nil {
		return err
	}
	if k.Make == "/" {
		if err := os.Mkdir(k.Path, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		return nil
	}
	f, err := os.OpenFile(k.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(k.Make)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
