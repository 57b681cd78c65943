package cliagent

import (
	"jarvis/service/cliopts"
	"slices"
	"testing"
)

// New refuses the arguments and modes cliopts.CheckArgs and
// CheckPermissionMode refuse (tested there).
func TestNewChecksArgs(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Kind: KindCodex, ExtraArgs: []string{"--full-auto"}}); err == nil {
		t.Error("New accepted --full-auto in ExtraArgs")
	}
	if _, err := New(Options{Kind: KindCodex, PermissionMode: "yolo"}); err == nil {
		t.Error("New accepted an unknown permission mode")
	}
}

// Each permission mode reaches each CLI as its own flags; read-only is the
// default.
func TestPermissionModeArgs(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}`)
	want := map[Kind]map[string][]string{
		KindClaude: {"": {"--permission-mode", "default"}, cliopts.PermEdit: {"--permission-mode", "acceptEdits"}, cliopts.PermFull: {"--permission-mode", "bypassPermissions"}},
		KindCodex:  {"": {"--sandbox", "read-only"}, cliopts.PermEdit: {"--sandbox", "workspace-write"}, cliopts.PermFull: {"--dangerously-bypass-approvals-and-sandbox"}},
		KindPi:     {"": {"--tools", "read,grep,find,ls"}, cliopts.PermEdit: {"--tools", "read,grep,find,ls,edit,write"}, cliopts.PermFull: nil},
	}
	n := 0
	for _, kind := range []Kind{KindClaude, KindCodex, KindPi} {
		for _, mode := range []string{"", cliopts.PermEdit, cliopts.PermFull} {
			r := f.runner(kind, func(o *Options) { o.PermissionMode = mode })
			_, _, _ = run(t, r, Request{Prompt: "hi"})
			n++
			argv := f.argv(n)
			for _, flag := range []string{"--permission-mode", "--sandbox", "--dangerously-bypass-approvals-and-sandbox", "--tools"} {
				i := slices.Index(argv, flag)
				w := want[kind][mode]
				wi := slices.Index(w, flag)
				switch {
				case i < 0 && wi < 0:
				case i < 0 || wi < 0:
					t.Errorf("%s %q: argv %q, want %q", kind, mode, argv, w)
				case wi+1 < len(w) && (i+1 >= len(argv) || argv[i+1] != w[wi+1]):
					t.Errorf("%s %q: argv %q, want %q", kind, mode, argv, w)
				}
			}
		}
	}
	if got := f.argv(4); !slices.Contains(got, "--skip-git-repo-check") {
		t.Errorf("codex argv %q lacks --skip-git-repo-check", got)
	}
}

// codex refuses a folder that is not a git repository unless told not to
// check, as the real one does; Jarvis's working folder is not a repository.
func TestCodexOutsideGitRepo(t *testing.T) {
	t.Parallel()
	f := newFake(t, `@sh case " $* " in *" --skip-git-repo-check "*) ;; *) echo "Not inside a trusted directory and --skip-git-repo-check was not specified." >&2; exit 1;; esac
{"type":"thread.started","thread_id":"th-git"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ran"}}
{"type":"turn.completed","usage":{}}`)
	res, _, err := run(t, f.runner(KindCodex, func(o *Options) { o.WorkDir = t.TempDir() }), Request{Prompt: "hi"})
	if err != nil || res.Text != "ran" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
